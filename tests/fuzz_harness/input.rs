//! Structured input for the targets: data types, element values and codec
//! chains drawn from the fuzzer's bytes with `arbitrary::Unstructured`.

use arbitrary::{Result, Unstructured};
use serde_json::{Value, json};

/// What kind of numbers a data type holds, for the value generators and the
/// round-trip model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// Two's complement (`signed`) or unsigned integer of `bits` bits, held
    /// in memory in the next power-of-two byte size (`int4` in an `i8`).
    Int {
        bits: u32,
        signed: bool,
    },
    /// IEEE binary32 / binary64.
    Float {
        bits: u32,
    },
    /// float16, bfloat16, complex, small floats: any bit pattern is a value,
    /// but the round-trip model does no arithmetic on them.
    Opaque,
    /// UTF-8 strings (variable length).
    Str,
}

/// A data type of the generated arrays.
#[derive(Clone, Copy, Debug)]
pub struct Dt {
    pub name: &'static str,
    /// In-memory element size in bytes; 0 for variable-length types.
    pub size: usize,
    pub kind: Kind,
}

const fn dt(name: &'static str, size: usize, kind: Kind) -> Dt {
    Dt { name, size, kind }
}

const fn int(name: &'static str, size: usize, bits: u32, signed: bool) -> Dt {
    dt(name, size, Kind::Int { bits, signed })
}

/// The data types the targets draw from.
pub const DATA_TYPES: [Dt; 21] = [
    dt("bool", 1, Kind::Bool),
    int("int2", 1, 2, true),
    int("int4", 1, 4, true),
    int("int8", 1, 8, true),
    int("int16", 2, 16, true),
    int("int32", 4, 32, true),
    int("int64", 8, 64, true),
    int("uint2", 1, 2, false),
    int("uint4", 1, 4, false),
    int("uint8", 1, 8, false),
    int("uint16", 2, 16, false),
    int("uint32", 4, 32, false),
    int("uint64", 8, 64, false),
    dt("float32", 4, Kind::Float { bits: 32 }),
    dt("float64", 8, Kind::Float { bits: 64 }),
    dt("float16", 2, Kind::Opaque),
    dt("bfloat16", 2, Kind::Opaque),
    dt("complex64", 8, Kind::Opaque),
    dt("float8_e4m3", 1, Kind::Opaque),
    dt("float4_e2m1fn", 1, Kind::Opaque),
    dt("string", 0, Kind::Str),
];

/// The data type called `name`.
pub fn data_type(name: &str) -> Option<Dt> {
    DATA_TYPES.iter().copied().find(|d| d.name == name)
}

/// The fixed-size numeric types (integers and IEEE floats) `scale_offset`
/// and `cast_value` take.
pub fn numeric_types() -> impl Iterator<Item = Dt> {
    DATA_TYPES
        .into_iter()
        .filter(|d| matches!(d.kind, Kind::Int { .. } | Kind::Float { .. }))
}

impl Dt {
    /// The fill value in array metadata (zero / false / empty).
    pub fn fill_json(self) -> Value {
        match self.kind {
            Kind::Bool => json!(false),
            Kind::Str => json!(""),
            _ if self.name.starts_with("complex") => json!([0.0, 0.0]),
            _ => json!(0),
        }
    }

    /// One valid in-memory element (native byte order).
    pub fn element(self, u: &mut Unstructured) -> Result<Vec<u8>> {
        Ok(match self.kind {
            Kind::Bool => vec![u8::from(u.arbitrary::<bool>()?)],
            Kind::Int { bits, signed } if bits < 8 => {
                let v = u.int_in_range(0..=(1u8 << bits) - 1)?;
                // Sign-extend the low `bits` bits for signed types.
                let v = if signed && v >> (bits - 1) == 1 {
                    v | !((1u8 << bits) - 1)
                } else {
                    v
                };
                vec![v]
            }
            Kind::Int { .. } => {
                // Edge values often: the extremes and zero.
                let mut bytes = u.bytes(self.size)?.to_vec();
                match u.int_in_range(0..=7u8)? {
                    0 => bytes.fill(0),
                    1 => bytes.fill(0xff),
                    _ => {}
                }
                bytes
            }
            Kind::Float { bits: 32 } => match float(u)? {
                Float::Value(f) => (f as f32).to_ne_bytes().to_vec(),
                Float::Bits(b) => (b as u32).to_ne_bytes().to_vec(),
            },
            Kind::Float { .. } => match float(u)? {
                Float::Value(f) => f.to_ne_bytes().to_vec(),
                Float::Bits(b) => b.to_ne_bytes().to_vec(),
            },
            Kind::Opaque => {
                let mut bytes = u.bytes(self.size)?.to_vec();
                if self.name == "float4_e2m1fn" {
                    bytes[0] &= 0x0f;
                }
                bytes
            }
            Kind::Str => unreachable!("variable-length types have no fixed element"),
        })
    }
}

/// A float that exercises rounding and ranges.
enum Float {
    /// An interesting value (converted to the type by the caller).
    Value(f64),
    /// Arbitrary bits (the low 32 for `float32`).
    Bits(u64),
}

fn float(u: &mut Unstructured) -> Result<Float> {
    const SPECIAL: [f64; 22] = [
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        -2.5,
        -0.5,
        127.5,
        128.0,
        -128.5,
        -129.0,
        255.5,
        256.0,
        65535.5,
        1e10,
        -1e10,
        3e38,
        1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
    ];
    Ok(match u.int_in_range(0..=2u8)? {
        0 => Float::Value(*u.choose(&SPECIAL)?),
        1 => Float::Value(f64::from(u.int_in_range(-300i32..=300)?) / 4.0),
        _ => Float::Bits(u.arbitrary()?),
    })
}

/// `n` elements of `dt` in native byte order, or `n` strings.
pub enum Elements {
    Fixed(Vec<u8>),
    Strings(Vec<String>),
}

pub fn elements(u: &mut Unstructured, dt: Dt, n: usize) -> Result<Elements> {
    if dt.kind == Kind::Str {
        let mut strings = Vec::with_capacity(n);
        for _ in 0..n {
            let len = u.int_in_range(0..=12usize)?;
            let s: String = (0..len)
                .map(|_| u.arbitrary::<char>())
                .collect::<Result<_>>()?;
            strings.push(s);
        }
        return Ok(Elements::Strings(strings));
    }
    let mut bytes = Vec::with_capacity(n * dt.size);
    for _ in 0..n {
        bytes.extend(dt.element(u)?);
    }
    Ok(Elements::Fixed(bytes))
}

/// A shape of 1 to 3 dimensions with at most `max` elements.
pub fn shape(u: &mut Unstructured, max: u64) -> Result<Vec<u64>> {
    let ndim = u.int_in_range(1..=3usize)?;
    let mut shape = Vec::with_capacity(ndim);
    let mut left = max;
    for _ in 0..ndim {
        let d = u.int_in_range(1..=left.clamp(1, 12))?;
        left /= d;
        shape.push(d);
    }
    Ok(shape)
}

/// A chunk shape for `shape`: each dimension between 1 and the array's.
pub fn chunk_shape(u: &mut Unstructured, shape: &[u64]) -> Result<Vec<u64>> {
    shape.iter().map(|&d| u.int_in_range(1..=d)).collect()
}

/// An inner chunk shape dividing `chunk` (sharding requires it).
pub fn inner_shape(u: &mut Unstructured, chunk: &[u64]) -> Result<Vec<u64>> {
    chunk
        .iter()
        .map(|&d| {
            let divisors: Vec<u64> = (1..=d).filter(|i| d % i == 0).collect();
            u.choose(&divisors).copied()
        })
        .collect()
}

/// A random permutation of `0..ndim`.
pub fn permutation(u: &mut Unstructured, ndim: usize) -> Result<Vec<usize>> {
    let mut order: Vec<usize> = (0..ndim).collect();
    for i in (1..ndim).rev() {
        let j = u.int_in_range(0..=i)?;
        order.swap(i, j);
    }
    Ok(order)
}

pub const ROUNDINGS: [&str; 5] = [
    "nearest-even",
    "towards-zero",
    "towards-positive",
    "towards-negative",
    "nearest-away",
];

/// An `endian` configuration for `dt` (none for one-byte types sometimes).
pub fn bytes_codec(u: &mut Unstructured, dt: Dt) -> Result<Value> {
    let endian = *u.choose(&["little", "big"])?;
    Ok(if dt.size == 1 && u.arbitrary()? {
        json!({ "name": "bytes" })
    } else {
        json!({ "name": "bytes", "configuration": { "endian": endian } })
    })
}

/// A `packbits` codec; `bits` is the element's bit width (for bit ranges).
pub fn packbits_codec(u: &mut Unstructured, bits: u32, ranges: bool) -> Result<Value> {
    let padding = *u.choose(&["none", "first_byte", "last_byte", "start_byte", "end_byte"])?;
    let mut config = json!({ "padding_encoding": padding });
    if ranges && u.arbitrary()? {
        let first = u.int_in_range(0..=bits - 1)?;
        let last = u.int_in_range(first..=bits - 1)?;
        config["first_bit"] = json!(first);
        config["last_bit"] = json!(last);
    }
    Ok(json!({ "name": "packbits", "configuration": config }))
}

/// A `zarrs.vlen` codec in the current or the older form.
pub fn vlen_codec(u: &mut Unstructured) -> Result<Value> {
    let endian = *u.choose(&["little", "big"])?;
    let mut config = json!({
        "index_codecs": [{ "name": "bytes", "configuration": { "endian": endian } }],
        "data_codecs": [{ "name": "bytes" }],
        "index_data_type": *u.choose(&["uint32", "uint64"])?,
    });
    if u.arbitrary()? {
        config["index_location"] = json!(*u.choose(&["start", "end"])?);
    }
    Ok(json!({ "name": "zarrs.vlen", "configuration": config }))
}

/// The bits of one component of `dt` that `packbits` packs.
pub fn packbits_bits(dt: Dt) -> u32 {
    match dt.kind {
        Kind::Bool => 1,
        Kind::Int { bits, .. } => bits,
        _ if dt.name == "float4_e2m1fn" => 4,
        _ if dt.name.starts_with("complex") => 4 * dt.size as u32,
        _ => 8 * dt.size as u32,
    }
}

/// The array -> bytes codec for `dt`: `zarrs.vlen` for strings, `bytes` or
/// `packbits` otherwise (with bit ranges, which lose bits, if `ranges`).
pub fn array_to_bytes(u: &mut Unstructured, dt: Dt, ranges: bool) -> Result<Value> {
    if dt.kind == Kind::Str {
        return vlen_codec(u);
    }
    let bits = packbits_bits(dt);
    if u.arbitrary()? {
        packbits_codec(u, bits, ranges)
    } else {
        bytes_codec(u, dt)
    }
}

/// A number for `scale_offset`: exactly representable in `dt` when it is a
/// float type (so the model and the codec parse the same value), an integer
/// otherwise.
pub fn scale_offset_number(u: &mut Unstructured, dt: Dt, nonzero: bool) -> Result<Value> {
    match dt.kind {
        Kind::Float { bits } => {
            let v: f64 = match u.int_in_range(0..=2u8)? {
                0 => *u.choose(&[0.1, 0.25, 2.0, -3.0, 1e-3, 1000.0, 7.5, 1.0])?,
                1 => f64::from(u.int_in_range(-1000i32..=1000)?) / 8.0,
                _ => f64::from_bits(u.arbitrary()?),
            };
            let v = if bits == 32 { f64::from(v as f32) } else { v };
            let v = if !v.is_finite() || (nonzero && v == 0.0) {
                1.0
            } else {
                v
            };
            Ok(json!(v))
        }
        _ => {
            let v = i64::from(u.int_in_range(-20i8..=20)?);
            Ok(json!(if nonzero && v == 0 { 1 } else { v }))
        }
    }
}

/// `scale_offset` for numeric `dt`.
pub fn scale_offset_codec(u: &mut Unstructured, dt: Dt) -> Result<Value> {
    let mut config = serde_json::Map::new();
    if u.arbitrary()? {
        config.insert("offset".into(), scale_offset_number(u, dt, false)?);
    }
    if u.arbitrary()? {
        config.insert("scale".into(), scale_offset_number(u, dt, true)?);
    }
    Ok(json!({ "name": "scale_offset", "configuration": config }))
}

/// `cast_value` from numeric `dt` to a numeric type; returns the codec and
/// the target type.
pub fn cast_value_codec(u: &mut Unstructured, _dt: Dt) -> Result<(Value, Dt)> {
    let targets: Vec<Dt> = numeric_types().collect();
    let target = *u.choose(&targets)?;
    let mut config = json!({ "data_type": target.name });
    if u.arbitrary()? {
        config["rounding"] = json!(*u.choose(&ROUNDINGS)?);
    }
    match (u.int_in_range(0..=2u8)?, target.kind) {
        (1, _) => config["out_of_range"] = json!("clamp"),
        (2, Kind::Int { .. }) => config["out_of_range"] = json!("wrap"),
        _ => {}
    }
    Ok((
        json!({ "name": "cast_value", "configuration": config }),
        target,
    ))
}

/// Wrap `codecs` in `sharding_indexed` with inner chunks `inner`.
pub fn sharding(u: &mut Unstructured, inner: &[u64], codecs: Vec<Value>) -> Result<Value> {
    let mut index_codecs =
        vec![json!({ "name": "bytes", "configuration": { "endian": "little" } })];
    if u.arbitrary()? {
        index_codecs.push(json!({ "name": "crc32c" }));
    }
    Ok(json!({
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": inner,
            "codecs": codecs,
            "index_codecs": index_codecs,
            "index_location": *u.choose(&["start", "end"])?,
        }
    }))
}

/// Array metadata for a store.
pub fn array_metadata(shape: &[u64], chunk: &[u64], dt: Dt, codecs: &[Value]) -> Value {
    json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": dt.name,
        "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": chunk } },
        "chunk_key_encoding": { "name": "default", "configuration": { "separator": "/" } },
        "fill_value": dt.fill_json(),
        "codecs": codecs,
    })
}

/// A codec chain over any of this crate's codecs, for `dt` with `ndim`
/// dimensions: optional `scale_offset` / `cast_value` / `transpose`, then an
/// array -> bytes codec for the type they produce. `cast_value` only for
/// numeric types, `scale_offset` only for numeric types; `packbits` bit
/// ranges only if `ranges`.
pub fn chain(u: &mut Unstructured, dt: Dt, ndim: usize, ranges: bool) -> Result<Vec<Value>> {
    let mut codecs = Vec::new();
    let mut current = dt;
    let numeric = matches!(dt.kind, Kind::Int { .. } | Kind::Float { .. });
    if numeric && u.arbitrary()? {
        codecs.push(scale_offset_codec(u, current)?);
    }
    if numeric && u.arbitrary()? {
        let (codec, target) = cast_value_codec(u, current)?;
        codecs.push(codec);
        current = target;
    }
    if u.arbitrary()? {
        let order = permutation(u, ndim)?;
        codecs.push(json!({ "name": "transpose", "configuration": { "order": order } }));
    }
    codecs.push(array_to_bytes(u, current, ranges)?);
    Ok(codecs)
}

/// Any JSON value, leaning towards the shapes codec configurations have
/// (`keys` are the configuration keys of the codec at hand).
pub fn json_value(u: &mut Unstructured, keys: &[&str], depth: u32) -> Result<Value> {
    const STRINGS: [&str; 16] = [
        "little",
        "big",
        "C",
        "F",
        "NaN",
        "Infinity",
        "-Infinity",
        "0x7ff8000000000000",
        "uint8",
        "float64",
        "int4",
        "clamp",
        "wrap",
        "nearest-even",
        "first_byte",
        "end",
    ];
    let choice = u.int_in_range(0..=if depth == 0 { 5u8 } else { 7 })?;
    Ok(match choice {
        0 => Value::Null,
        1 => json!(u.arbitrary::<bool>()?),
        2 => json!(u.int_in_range(-3i64..=70)?),
        3 => {
            let f = f64::from_bits(u.arbitrary()?);
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        4 => json!(*u.choose(&STRINGS)?),
        5 => json!(u.arbitrary::<String>()?),
        6 => {
            let n = u.int_in_range(0..=4usize)?;
            Value::Array(
                (0..n)
                    .map(|_| json_value(u, keys, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => {
            let n = u.int_in_range(0..=4usize)?;
            let mut map = serde_json::Map::new();
            for _ in 0..n {
                let key = if !keys.is_empty() && u.int_in_range(0..=3u8)? > 0 {
                    (*u.choose(keys)?).to_string()
                } else {
                    u.arbitrary::<String>()?
                };
                map.insert(key, json_value(u, keys, depth - 1)?);
            }
            Value::Object(map)
        }
    })
}
