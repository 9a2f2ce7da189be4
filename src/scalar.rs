//! Scalars written with the Zarr V3 fill-value JSON encoding.
//!
//! `scale_offset`'s `offset` / `scale` and every `cast_value` `scalar_map`
//! entry are written this way, in the encoding of a given data type:
//! - integers: a JSON integer (an integral JSON float such as `1000.0` is
//!   accepted too);
//! - floats: a JSON number, `"NaN"`, `"Infinity"`, `"+Infinity"`,
//!   `"-Infinity"`, or the bit pattern as a hex string (`"0x7fc00000"`);
//! - for both, a number written as a string (`"0.25"`, `"1000"`), which
//!   zarr-python accepts.
//!
//! A parsed scalar is kept as native-endian element bytes, the same form as a
//! zarrs [`FillValue`](zarrs::array::FillValue), so that fill values, map
//! entries and chunk elements all go through the same typed readers.

use crate::kernels::minifloat::MiniRound;
use crate::kernels::rounding::RoundingMode;
use crate::numeric::NumericType;

/// Parse `json` as a scalar of `data_type`, returning native-endian bytes.
///
/// # Errors
/// Returns a sentence saying why the value is not a scalar of that type.
pub fn parse_scalar(json: &serde_json::Value, data_type: NumericType) -> Result<Vec<u8>, String> {
    if data_type.is_float() {
        parse_float(json, data_type)
    } else {
        parse_int(json, data_type)
    }
}

/// Describe `json` for an error message.
fn show(json: &serde_json::Value) -> String {
    json.to_string()
}

/// A string that looks like a decimal number (so Rust's parser does not also
/// accept `"inf"` / `"nan"` spellings the fill-value encoding does not have).
fn numeric_string(s: &str) -> Option<&str> {
    let s = s.trim();
    let plausible = !s.is_empty()
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    plausible.then_some(s)
}

fn parse_int(json: &serde_json::Value, data_type: NumericType) -> Result<Vec<u8>, String> {
    let value: i128 = match json {
        serde_json::Value::Number(n) => {
            if let Some(v) = n.as_i64() {
                v.into()
            } else if let Some(v) = n.as_u64() {
                v.into()
            } else {
                integral_f64(n.as_f64().unwrap_or(f64::NAN), json, data_type)?
            }
        }
        serde_json::Value::String(s) => {
            let s = numeric_string(s)
                .ok_or_else(|| format!("{} is not a {data_type} value", show(json)))?;
            match s.parse::<i128>() {
                Ok(v) => v,
                Err(_) => integral_f64(s.parse::<f64>().unwrap_or(f64::NAN), json, data_type)?,
            }
        }
        _ => return Err(format!("{} is not a {data_type} value", show(json))),
    };
    let (lo, hi) = data_type.int_range().expect("integer type");
    if value < lo || value > hi {
        return Err(format!(
            "{} is out of the range [{lo}, {hi}] of {data_type}",
            show(json)
        ));
    }
    Ok(int_bytes(value, data_type))
}

fn integral_f64(v: f64, json: &serde_json::Value, data_type: NumericType) -> Result<i128, String> {
    // 2^127 bounds the i128 conversion; anything that large is out of range anyway.
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1.7e38 {
        #[allow(clippy::cast_possible_truncation)]
        Ok(v as i128)
    } else {
        Err(format!(
            "{} is not an integer value of {data_type}",
            show(json)
        ))
    }
}

/// Native-endian bytes of an integer already known to be in range.
#[must_use]
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn int_bytes(value: i128, data_type: NumericType) -> Vec<u8> {
    match data_type {
        NumericType::Int2 | NumericType::Int4 | NumericType::Int8 => {
            (value as i8).to_ne_bytes().to_vec()
        }
        NumericType::Int16 => (value as i16).to_ne_bytes().to_vec(),
        NumericType::Int32 => (value as i32).to_ne_bytes().to_vec(),
        NumericType::Int64 => (value as i64).to_ne_bytes().to_vec(),
        NumericType::UInt2 | NumericType::UInt4 | NumericType::UInt8 => vec![value as u8],
        NumericType::UInt16 => (value as u16).to_ne_bytes().to_vec(),
        NumericType::UInt32 => (value as u32).to_ne_bytes().to_vec(),
        NumericType::UInt64 => (value as u64).to_ne_bytes().to_vec(),
        _ => unreachable!("int_bytes called with a float type"),
    }
}

fn parse_float(json: &serde_json::Value, data_type: NumericType) -> Result<Vec<u8>, String> {
    let value = match json {
        serde_json::Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" | "+Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            s if s.starts_with("0x") || s.starts_with("0X") => {
                return parse_hex(&s[2..], json, data_type);
            }
            s => numeric_string(s)
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| format!("{} is not a {data_type} value", show(json)))?,
        },
        _ => return Err(format!("{} is not a {data_type} value", show(json))),
    };
    float_bytes(value, data_type).map_err(|reason| format!("{} {reason}", show(json)))
}

fn parse_hex(
    digits: &str,
    json: &serde_json::Value,
    data_type: NumericType,
) -> Result<Vec<u8>, String> {
    let size = data_type.size();
    // `from_str_radix` alone would also take a sign (`"0x+3f80000"`), which
    // is not a hex digit.
    let bits = (digits.len() == 2 * size && digits.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(digits, 16).ok())
        .flatten()
        .ok_or_else(|| {
            format!(
                "{} is not a hex bit pattern of {data_type} ({} hex digits after 0x)",
                show(json),
                2 * size
            )
        })?;
    let le = bits.to_le_bytes();
    let mut out = le[..size].to_vec();
    if cfg!(target_endian = "big") {
        out.reverse();
    }
    Ok(out)
}

/// Round `value` to the nearest `data_type` value (ties to even), as a JSON
/// number is read into a float type. Finite values beyond the type's range are
/// refused rather than turned into infinity.
///
/// # Errors
/// Returns the end of a sentence saying why the value does not fit.
pub fn float_bytes(value: f64, data_type: NumericType) -> Result<Vec<u8>, String> {
    let overflow = || format!("is out of the finite range of {data_type}");
    let bytes = match data_type {
        NumericType::Float64 => value.to_ne_bytes().to_vec(),
        NumericType::Float32 => {
            #[allow(clippy::cast_possible_truncation)]
            let v = value as f32;
            if v.is_infinite() && value.is_finite() {
                return Err(overflow());
            }
            v.to_ne_bytes().to_vec()
        }
        NumericType::Float16 => {
            let v = crate::kernels::cast::f16_nearest(value);
            if v.is_infinite() && value.is_finite() {
                return Err(overflow());
            }
            v.to_ne_bytes().to_vec()
        }
        NumericType::BFloat16 => {
            let v = crate::kernels::cast::bf16_nearest(value);
            if v.is_infinite() && value.is_finite() {
                return Err(overflow());
            }
            v.to_ne_bytes().to_vec()
        }
        NumericType::Mini(format) => {
            match format.round_from_f64(value, RoundingMode::NearestEven) {
                MiniRound::Value(bits) => vec![bits],
                MiniRound::Overflow { .. } => return Err(overflow()),
                MiniRound::NotRepresentable => {
                    return Err(format!("has no representation in {data_type}"));
                }
            }
        }
        _ => unreachable!("float_bytes called with an integer type"),
    };
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::pow2;
    use serde_json::json;

    fn f32_of(json: serde_json::Value) -> Result<f32, String> {
        parse_scalar(&json, NumericType::Float32).map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
    }

    #[test]
    fn float_spellings() {
        assert_eq!(f32_of(json!(0.5)).unwrap(), 0.5);
        assert_eq!(f32_of(json!("0.25")).unwrap(), 0.25);
        assert_eq!(f32_of(json!("-1e3")).unwrap(), -1000.0);
        assert!(f32_of(json!("NaN")).unwrap().is_nan());
        assert_eq!(f32_of(json!("Infinity")).unwrap(), f32::INFINITY);
        assert_eq!(f32_of(json!("+Infinity")).unwrap(), f32::INFINITY);
        assert_eq!(f32_of(json!("-Infinity")).unwrap(), f32::NEG_INFINITY);
        // 0x3f800000 is 1.0f32 (IEEE 754 binary32: exponent 127, mantissa 0).
        assert_eq!(f32_of(json!("0x3f800000")).unwrap(), 1.0);
        // 0.1 is not a float32; the nearest float32 is 0x3dcccccd.
        assert_eq!(f32_of(json!(0.1)).unwrap().to_bits(), 0x3dcc_cccd);
    }

    /// A JSON number rounds to float16 / bfloat16 once, from the exact
    /// float64 value. 1 + 2^-11 + 2^-40 lies just above the midpoint between
    /// float16 1.0 (0x3c00) and 1 + 2^-10 (0x3c01), so the nearest is
    /// 0x3c01; rounding to float32 first lands on the midpoint 1 + 2^-11,
    /// which ties to even 0x3c00. bfloat16 likewise, with 1 + 2^-8 + 2^-40
    /// between 1.0 (0x3f80) and 1 + 2^-7 (0x3f81). numpy 2 agrees on float16:
    /// `np.float16(1 + 2**-11 + 2**-40)` is 0x3c01.
    #[test]
    fn half_precision_numbers_round_once() {
        let bits = |value: f64, t: NumericType| {
            let b = parse_scalar(&json!(value), t).unwrap();
            u16::from_ne_bytes(b.try_into().unwrap())
        };
        let x = 1.0 + pow2(-11) + pow2(-40);
        assert_eq!(bits(x, NumericType::Float16), 0x3c01);
        let y = 1.0 + pow2(-8) + pow2(-40);
        assert_eq!(bits(y, NumericType::BFloat16), 0x3f81);
        // Exactly on the midpoint: ties to even.
        assert_eq!(bits(1.0 + pow2(-11), NumericType::Float16), 0x3c00);
    }

    #[test]
    fn float_refusals() {
        assert!(f32_of(json!("inf")).is_err());
        assert!(f32_of(json!("nan")).is_err());
        assert!(f32_of(json!("0x3f80")).is_err()); // wrong width
        // Eight characters, but "+" is not a hex digit.
        assert!(f32_of(json!("0x+3f80000")).is_err());
        assert!(f32_of(json!(true)).is_err());
        assert!(f32_of(json!(1e39)).is_err()); // beyond float32's range
        assert!(f32_of(json!([1])).is_err());
    }

    #[test]
    fn int_spellings_and_ranges() {
        let u16_of = |j| {
            parse_scalar(&j, NumericType::UInt16).map(|b| u16::from_ne_bytes(b.try_into().unwrap()))
        };
        assert_eq!(u16_of(json!(1000)).unwrap(), 1000);
        assert_eq!(u16_of(json!(1000.0)).unwrap(), 1000);
        assert_eq!(u16_of(json!("1000")).unwrap(), 1000);
        assert!(u16_of(json!(1000.5)).is_err());
        assert!(u16_of(json!(-1)).is_err());
        assert!(u16_of(json!(65536)).is_err());
        assert!(u16_of(json!("NaN")).is_err());
        let i4 = |j| parse_scalar(&j, NumericType::Int4).map(|b| b[0] as i8);
        assert_eq!(i4(json!(-8)).unwrap(), -8);
        assert!(i4(json!(8)).is_err());
        let u64_of = |j| {
            parse_scalar(&j, NumericType::UInt64).map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
        };
        assert_eq!(u64_of(json!(u64::MAX)).unwrap(), u64::MAX);
        assert_eq!(u64_of(json!("18446744073709551615")).unwrap(), u64::MAX);
    }
}
