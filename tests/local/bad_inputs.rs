//! The bad-input catalogue: one table of hostile inputs (array metadata,
//! codec configurations, chunk bytes) for every codec of this crate, and
//! the error each must produce.
//!
//! Each row is run through the path a user takes. A metadata row builds the
//! array in a `MemoryStore` (`Array::new_with_metadata`) and, if zarrs
//! accepts it, runs [`validate_codecs`] (the checks that need the data type,
//! which zarrs otherwise runs at the first chunk access). A chunk row stores
//! the raw chunk bytes under the first chunk's key of a valid array and
//! reads the chunk back, whole (`retrieve_chunk`) and in part
//! (`retrieve_chunk_subset`, the partial decoders). Every run must return an
//! error, never panic, whose text holds each expected substring: the codec,
//! the field and the value. The expectations come from the specifications
//! (`/work/shared/specs`): what they say must be refused.
//!
//! `docs/reliability.md` ("Bad-input catalogue") has the same table in words.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use zarrs::array::codec::api::ArrayBytes;
use zarrs::array::{Array, ArrayMetadata, ArraySubset};
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{Bytes, WritableStorageTraits};
use zarrs_extension_codecs::validate_codecs;

/// Which part of a row is the hostile input.
#[derive(Clone, Copy)]
enum Input {
    /// The array metadata: refused by `Array::new_with_metadata` or
    /// `validate_codecs`.
    M,
    /// The raw bytes of the first chunk (the metadata is valid): refused when
    /// the chunk is read whole and when its last element is read alone.
    C(&'static [u8]),
    /// As `C`, but only a whole read can see it (bytes past the elements):
    /// a partial read fetches only the bytes it needs, as zarrs' own
    /// partial decoders do.
    W(&'static [u8]),
}
use Input::{C, M, W};

/// One hostile input and the error it must produce.
struct Row {
    /// A unique name, reported on failure.
    name: &'static str,
    /// The codec under test.
    codec: &'static str,
    /// The array's data type.
    data_type: &'static str,
    /// The array's fill value (JSON).
    fill_value: &'static str,
    /// The array shape, one chunk.
    shape: &'static [u64],
    /// The codecs (JSON).
    codecs: &'static str,
    /// What is hostile: the metadata, or the chunk bytes.
    input: Input,
    /// Substrings the error text must hold.
    expect: &'static [&'static str],
}

const LE: &str = r#"[{"name": "bytes", "configuration": {"endian": "little"}}]"#;

macro_rules! row {
    ($name:literal, $codec:literal, $dt:literal, $fill:literal, $shape:expr, $codecs:expr,
     $input:expr, [$($expect:expr),+ $(,)?]) => {
        Row {
            name: $name,
            codec: $codec,
            data_type: $dt,
            fill_value: $fill,
            shape: $shape,
            codecs: $codecs,
            input: $input,
            expect: &[$($expect),+],
        }
    };
}

/// `[{"name": "scale_offset", "configuration": CONF}, bytes little]`.
macro_rules! so {
    ($conf:literal) => {
        concat!(
            r#"[{"name": "scale_offset", "configuration": "#,
            $conf,
            r#"}, {"name": "bytes", "configuration": {"endian": "little"}}]"#
        )
    };
}

/// `[{"name": "cast_value", "configuration": CONF}, bytes little]`.
macro_rules! cv {
    ($conf:literal) => {
        concat!(
            r#"[{"name": "cast_value", "configuration": "#,
            $conf,
            r#"}, {"name": "bytes", "configuration": {"endian": "little"}}]"#
        )
    };
}

/// `[{"name": "transpose", "configuration": CONF}, bytes little]`.
macro_rules! tr {
    ($conf:literal) => {
        concat!(
            r#"[{"name": "transpose", "configuration": "#,
            $conf,
            r#"}, {"name": "bytes", "configuration": {"endian": "little"}}]"#
        )
    };
}

/// `[{"name": "packbits", "configuration": CONF}]`.
macro_rules! pb {
    ($conf:literal) => {
        concat!(r#"[{"name": "packbits", "configuration": "#, $conf, "}]")
    };
}

/// `[{"name": "zarrs.vlen", "configuration": CONF}]`.
macro_rules! vl {
    ($conf:literal) => {
        concat!(r#"[{"name": "zarrs.vlen", "configuration": "#, $conf, "}]")
    };
}

/// A valid `zarrs.vlen` configuration: `uint32` offsets, index first.
const VLEN_OK: &str = r#"[{"name": "zarrs.vlen", "configuration": {
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "data_codecs": [{"name": "bytes"}],
    "index_data_type": "uint32", "index_location": "start"}}]"#;

/// The same with the index at the end.
const VLEN_END: &str = r#"[{"name": "zarrs.vlen", "configuration": {
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "data_codecs": [{"name": "bytes"}],
    "index_data_type": "uint32", "index_location": "end"}}]"#;

const UTF8: &str = r#"[{"name": "vlen-utf8"}]"#;
const VBYTES: &str = r#"[{"name": "vlen-bytes"}]"#;
const PB_NONE: &str = r#"[{"name": "packbits"}]"#;
const PB_FIRST: &str =
    r#"[{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}]"#;
const PB_LAST: &str =
    r#"[{"name": "packbits", "configuration": {"padding_encoding": "last_byte"}}]"#;

const HUGE: &[u64] = &[4_294_967_296, 4_294_967_296];

#[rustfmt::skip]
static ROWS: &[Row] = &[
    // ---- scale_offset: configuration ----
    row!("so_unknown_key", "scale_offset", "float64", "0.0", &[4], so!(r#"{"offset": 1, "factor": 2}"#), M,
         ["scale_offset", "factor = 2", "unknown configuration key"]),
    row!("so_scale_zero_int", "scale_offset", "int32", "0", &[4], so!(r#"{"scale": 0}"#), M,
         ["scale_offset", "scale = 0"]),
    row!("so_scale_zero_float", "scale_offset", "float64", "0.0", &[4], so!(r#"{"scale": 0.0}"#), M,
         ["scale_offset", "scale = 0"]),
    row!("so_scale_nan", "scale_offset", "float64", "0.0", &[4], so!(r#"{"scale": "NaN"}"#), M,
         ["scale_offset", "scale = \"NaN\""]),
    row!("so_scale_infinity", "scale_offset", "float32", "0.0", &[4], so!(r#"{"scale": "Infinity"}"#), M,
         ["scale_offset", "scale = \"Infinity\""]),
    row!("so_scale_negative_unsigned", "scale_offset", "uint8", "0", &[4], so!(r#"{"scale": -1}"#), M,
         ["scale_offset", "scale = -1"]),
    row!("so_offset_not_a_number", "scale_offset", "float64", "0.0", &[4], so!(r#"{"offset": "abc"}"#), M,
         ["scale_offset", "offset = \"abc\""]),
    row!("so_offset_bool", "scale_offset", "float64", "0.0", &[4], so!(r#"{"offset": true}"#), M,
         ["scale_offset", "offset = true"]),
    row!("so_offset_array", "scale_offset", "int16", "0", &[4], so!(r#"{"offset": [1, 2]}"#), M,
         ["scale_offset", "offset = [1,2]"]),
    row!("so_offset_out_of_range", "scale_offset", "uint8", "0", &[4], so!(r#"{"offset": 256}"#), M,
         ["scale_offset", "offset = 256"]),
    row!("so_offset_fraction_for_int", "scale_offset", "int16", "0", &[4], so!(r#"{"offset": 1.5}"#), M,
         ["scale_offset", "offset = 1.5"]),
    row!("so_data_type_complex", "scale_offset", "complex64", "[0.0, 0.0]", &[4], so!(r#"{"offset": 1}"#), M,
         ["scale_offset", "data type complex64"]),
    row!("so_data_type_bool", "scale_offset", "bool", "false", &[4], r#"[{"name": "scale_offset", "configuration": {"offset": 1}}, {"name": "bytes"}]"#, M,
         ["scale_offset", "data type bool"]),
    row!("so_fill_value_overflows", "scale_offset", "uint8", "10", &[4], so!(r#"{"offset": 20}"#), M,
         ["scale_offset", "10"]),
    // ---- scale_offset: chunks ----
    row!("so_chunk_not_multiple_of_scale", "scale_offset", "int16", "0", &[2], so!(r#"{"scale": 2}"#),
         C(&[2, 0, 3, 0]), ["scale_offset", "decoding", "3 / 2"]),
    row!("so_chunk_decode_overflow", "scale_offset", "uint8", "200", &[2], r#"[{"name": "scale_offset", "configuration": {"offset": 200}}, {"name": "bytes"}]"#,
         C(&[0, 100]), ["scale_offset", "decoding", "100"]),

    // ---- cast_value: configuration ----
    row!("cv_missing_data_type", "cast_value", "float64", "0.0", &[4], cv!(r#"{"rounding": "nearest-even"}"#), M,
         ["cast_value", "data_type"]),
    row!("cv_unknown_data_type", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint7"}"#), M,
         ["cast_value", "data_type", "uint7"]),
    row!("cv_data_type_wrong_type", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": 5}"#), M,
         ["cast_value", "data_type", "5"]),
    row!("cv_data_type_variable", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "string"}"#), M,
         ["cast_value", "data_type", "string"]),
    row!("cv_rounding_unknown", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "rounding": "up"}"#), M,
         ["cast_value", "rounding = \"up\""]),
    row!("cv_rounding_wrong_type", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "rounding": 1}"#), M,
         ["cast_value", "rounding = 1"]),
    row!("cv_out_of_range_unknown", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "out_of_range": "saturate"}"#), M,
         ["cast_value", "out_of_range = \"saturate\""]),
    row!("cv_wrap_into_float", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "float32", "out_of_range": "wrap"}"#), M,
         ["cast_value", "out_of_range = \"wrap\"", "float32"]),
    row!("cv_unknown_key", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "mode": "x"}"#), M,
         ["cast_value", "mode = \"x\"", "unknown configuration key"]),
    row!("cv_scalar_map_key_wrong_type", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "scalar_map": {"encode": [["abc", 0]]}}"#), M,
         ["cast_value", "scalar_map", "\"abc\""]),
    row!("cv_scalar_map_decode_key_wrong_type", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "scalar_map": {"decode": [[true, 1.0]]}}"#), M,
         ["cast_value", "scalar_map", "true"]),
    row!("cv_scalar_map_value_out_of_range", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "scalar_map": {"encode": [["NaN", 256]]}}"#), M,
         ["cast_value", "scalar_map", "256"]),
    row!("cv_scalar_map_entry_not_a_pair", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "scalar_map": {"encode": [[1]]}}"#), M,
         ["cast_value", "scalar_map", "[1]"]),
    row!("cv_scalar_map_unknown_direction", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "scalar_map": {"both": []}}"#), M,
         ["cast_value", "scalar_map", "both"]),
    row!("cv_scalar_map_not_an_object", "cast_value", "float64", "0.0", &[4], cv!(r#"{"data_type": "uint8", "scalar_map": [1, 2]}"#), M,
         ["cast_value", "scalar_map", "[1,2]"]),
    row!("cv_fill_value_not_round_trip", "cast_value", "float64", "0.5", &[4], cv!(r#"{"data_type": "uint8"}"#), M,
         ["cast_value", "fill value 0.5"]),
    row!("cv_fill_value_nan_into_int", "cast_value", "float64", "\"NaN\"", &[4], cv!(r#"{"data_type": "uint8"}"#), M,
         ["cast_value", "NaN"]),
    row!("cv_fill_value_out_of_range", "cast_value", "int16", "300", &[4], cv!(r#"{"data_type": "uint8"}"#), M,
         ["cast_value", "300"]),
    row!("cv_input_type_string", "cast_value", "string", "\"\"", &[4], r#"[{"name": "cast_value", "configuration": {"data_type": "uint8"}}, {"name": "vlen-utf8"}]"#, M,
         ["cast_value", "string"]),
    // ---- cast_value: chunks ----
    row!("cv_chunk_decode_out_of_range", "cast_value", "int8", "0", &[2], r#"[{"name": "cast_value", "configuration": {"data_type": "uint8"}}, {"name": "bytes"}]"#,
         C(&[0, 200]), ["cast_value", "decod", "200"]),
    row!("cv_chunk_decode_nan_into_int", "cast_value", "int16", "0", &[1], cv!(r#"{"data_type": "float32"}"#),
         C(&[0, 0, 0xc0, 0x7f]), ["cast_value", "decod", "NaN"]),

    // ---- bytes: configuration ----
    row!("bytes_endian_missing_multibyte", "bytes", "float32", "0.0", &[4], r#"[{"name": "bytes"}]"#, M,
         ["bytes", "endian", "float32"]),
    row!("bytes_endian_unknown", "bytes", "int16", "0", &[4], r#"[{"name": "bytes", "configuration": {"endian": "middle"}}]"#, M,
         ["bytes", "endian = \"middle\""]),
    row!("bytes_endian_wrong_type", "bytes", "int16", "0", &[4], r#"[{"name": "bytes", "configuration": {"endian": 1}}]"#, M,
         ["bytes", "endian = 1"]),
    row!("bytes_unknown_key", "bytes", "int16", "0", &[4], r#"[{"name": "bytes", "configuration": {"endian": "little", "order": "C"}}]"#, M,
         ["bytes", "order = \"C\"", "unknown configuration key"]),
    row!("bytes_variable_length_type", "bytes", "string", "\"\"", &[4], r#"[{"name": "bytes"}]"#, M,
         ["bytes", "data type string", "variable length"]),
    row!("bytes_huge_chunk_shape", "bytes", "uint8", "0", HUGE, r#"[{"name": "bytes"}]"#, M,
         ["bytes", "4294967296"]),
    // ---- bytes: chunks ----
    row!("bytes_chunk_truncated", "bytes", "int16", "0", &[4], LE, C(&[1, 0, 2, 0, 3, 0, 4]),
         ["bytes", "7", "8"]),
    row!("bytes_chunk_extended", "bytes", "int16", "0", &[4], LE, W(&[1, 0, 2, 0, 3, 0, 4, 0, 5]),
         ["bytes", "9 bytes", "8"]),
    row!("bytes_chunk_empty", "bytes", "int16", "0", &[4], LE, C(&[]),
         ["bytes", "0", "8"]),
    row!("bytes_chunk_sub_byte_truncated", "bytes", "int4", "0", &[4], r#"[{"name": "bytes"}]"#, C(&[1, 2, 3]),
         ["bytes", "3", "4"]),

    // ---- transpose: configuration ----
    row!("tr_order_duplicate", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": [0, 0]}"#), M,
         ["transpose", "order", "[0,0]"]),
    row!("tr_order_wrong_length", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": [0, 1, 2]}"#), M,
         ["transpose", "order", "[0,1,2]", "2"]),
    row!("tr_order_too_short", "transpose", "int16", "0", &[2, 2, 2], tr!(r#"{"order": [1, 0]}"#), M,
         ["transpose", "order", "[1,0]", "3"]),
    row!("tr_order_axis_out_of_range", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": [0, 2]}"#), M,
         ["transpose", "order", "2"]),
    row!("tr_order_negative", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": [-1, 0]}"#), M,
         ["transpose", "order", "-1"]),
    row!("tr_order_fraction", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": [0.5, 1]}"#), M,
         ["transpose", "order", "0.5"]),
    row!("tr_order_other_string", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": "X"}"#), M,
         ["transpose", "order", "\"X\""]),
    row!("tr_order_number", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": 5}"#), M,
         ["transpose", "order", "5"]),
    row!("tr_order_missing", "transpose", "int16", "0", &[2, 2], tr!(r#"{}"#), M,
         ["transpose", "order"]),
    row!("tr_unknown_key", "transpose", "int16", "0", &[2, 2], tr!(r#"{"order": [1, 0], "axes": 1}"#), M,
         ["transpose", "axes = 1", "unknown configuration key"]),

    // ---- packbits: configuration ----
    row!("pb_padding_unknown", "packbits", "bool", "false", &[10], pb!(r#"{"padding_encoding": "middle_byte"}"#), M,
         ["packbits", "padding_encoding = \"middle_byte\""]),
    row!("pb_padding_wrong_type", "packbits", "bool", "false", &[10], pb!(r#"{"padding_encoding": 1}"#), M,
         ["packbits", "padding_encoding = 1"]),
    row!("pb_last_bit_before_first", "packbits", "uint8", "0", &[10], pb!(r#"{"first_bit": 3, "last_bit": 1}"#), M,
         ["packbits", "last_bit = 1", "3"]),
    row!("pb_first_bit_64", "packbits", "uint8", "0", &[10], pb!(r#"{"first_bit": 64}"#), M,
         ["packbits", "first_bit = 64"]),
    row!("pb_last_bit_beyond_type", "packbits", "uint8", "0", &[10], pb!(r#"{"last_bit": 8}"#), M,
         ["packbits", "last_bit", "8", "uint8"]),
    row!("pb_first_bit_negative", "packbits", "uint8", "0", &[10], pb!(r#"{"first_bit": -1}"#), M,
         ["packbits", "first_bit = -1"]),
    row!("pb_bit_wrong_type", "packbits", "uint8", "0", &[10], pb!(r#"{"last_bit": "7"}"#), M,
         ["packbits", "last_bit = \"7\""]),
    row!("pb_both_spellings", "packbits", "uint8", "0", &[10], pb!(r#"{"first_bit": 0, "start_bit": 3}"#), M,
         ["packbits", "start_bit", "first_bit"]),
    row!("pb_unknown_key", "packbits", "bool", "false", &[10], pb!(r#"{"bits": 3}"#), M,
         ["packbits", "bits = 3", "unknown configuration key"]),
    row!("pb_variable_length_type", "packbits", "string", "\"\"", &[10], PB_NONE, M,
         ["packbits", "string"]),
    // ---- packbits: chunks (10 bools: 10 bits, 2 bytes, 6 padding bits) ----
    row!("pb_chunk_truncated", "packbits", "bool", "false", &[10], PB_NONE, C(&[0xff]),
         ["packbits", "1", "2"]),
    row!("pb_chunk_extended", "packbits", "bool", "false", &[10], PB_NONE, W(&[0xff, 0x03, 0]),
         ["packbits", "3 bytes", "2"]),
    row!("pb_chunk_empty", "packbits", "bool", "false", &[10], PB_FIRST, C(&[]),
         ["packbits", "0", "3"]),
    row!("pb_padding_byte_wrong_first", "packbits", "bool", "false", &[10], PB_FIRST, C(&[3, 0xff, 0x03]),
         ["packbits", "padding", "3", "6"]),
    row!("pb_padding_byte_out_of_range", "packbits", "bool", "false", &[10], PB_FIRST, C(&[9, 0xff, 0x03]),
         ["packbits", "padding", "9", "6"]),
    row!("pb_padding_byte_wrong_last", "packbits", "bool", "false", &[10], PB_LAST, C(&[0xff, 0x03, 0]),
         ["packbits", "padding", "0", "6"]),
    row!("pb_padding_byte_missing", "packbits", "bool", "false", &[10], PB_LAST, C(&[0xff, 0x03]),
         ["packbits", "2", "3"]),

    // ---- zarrs.vlen: configuration ----
    row!("vl_configuration_missing", "zarrs.vlen", "string", "\"\"", &[2], r#"[{"name": "zarrs.vlen"}]"#, M,
         ["zarrs.vlen", "configuration"]),
    row!("vl_index_data_type_unknown", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint16"}"#), M,
         ["zarrs.vlen", "index_data_type", "uint16"]),
    row!("vl_index_location_unknown", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint32", "index_location": "middle"}"#), M,
         ["zarrs.vlen", "index_location", "middle"]),
    row!("vl_unknown_key", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint32", "extra": 1}"#), M,
         ["zarrs.vlen", "extra = 1", "unknown configuration key"]),
    row!("vl_index_codecs_missing", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"data_codecs": [{"name": "bytes"}], "index_data_type": "uint32"}"#), M,
         ["zarrs.vlen", "index_codecs"]),
    row!("vl_index_codecs_unknown_codec", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "nope"}], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint32"}"#), M,
         ["zarrs.vlen", "index_codecs", "nope"]),
    row!("vl_index_codecs_empty", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint32"}"#), M,
         ["zarrs.vlen", "index_codecs", "[]"]),
    row!("vl_index_codecs_bytes_without_endian", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "bytes"}], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint32"}"#), M,
         ["zarrs.vlen", "index_codecs", "bytes"]),
    row!("vl_index_codecs_two_array_to_bytes", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "bytes", "configuration": {"endian": "little"}}], "data_codecs": [{"name": "bytes"}], "index_data_type": "uint32"}"#), M,
         ["zarrs.vlen", "index_codecs"]),
    row!("vl_data_codecs_unknown_codec", "zarrs.vlen", "string", "\"\"", &[2],
         vl!(r#"{"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "data_codecs": [{"name": "nope"}], "index_data_type": "uint32"}"#), M,
         ["zarrs.vlen", "data_codecs", "nope"]),
    row!("vl_fixed_size_type", "zarrs.vlen", "uint8", "0", &[2], VLEN_OK, M,
         ["zarrs.vlen", "uint8", "fixed size"]),
    // ---- zarrs.vlen: chunks (2 elements: length field | 3 uint32 offsets | data) ----
    row!("vl_chunk_shorter_than_length_field", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK, C(&[12, 0, 0, 0]),
         ["zarrs.vlen", "index length field", "4"]),
    row!("vl_index_longer_than_chunk", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK,
         C(&[0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, b'a', b'b']),
         ["zarrs.vlen", "index length field is 1048576"]),
    row!("vl_index_length_wrong", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK,
         C(&[8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, b'a', b'b']),
         ["zarrs.vlen", "8", "12"]),
    row!("vl_first_offset_not_zero", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK,
         C(&[12, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, b'a', b'b', b'c']),
         ["zarrs.vlen", "offset 0 is 1"]),
    row!("vl_offsets_decreasing", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK,
         C(&[12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, b'a', b'b']),
         ["zarrs.vlen", "offset 2 (2) is less than offset 1 (3)"]),
    row!("vl_last_offset_past_data", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK,
         C(&[12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, b'a', b'b']),
         ["zarrs.vlen", "last offset", "9"]),
    row!("vl_data_after_last_offset", "zarrs.vlen", "string", "\"\"", &[2], VLEN_OK,
         W(&[12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', b'c']),
         ["zarrs.vlen", "last offset is 2", "3 bytes"]),
    row!("vl_end_index_longer_than_chunk", "zarrs.vlen", "string", "\"\"", &[2], VLEN_END,
         C(&[b'a', b'b', 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0]),
         ["zarrs.vlen", "index length field is 255"]),
    // ---- vlen-utf8 / vlen-bytes (this crate's overrides) ----
    row!("vu_configuration_key", "vlen-utf8", "string", "\"\"", &[2], r#"[{"name": "vlen-utf8", "configuration": {"x": 1}}]"#, M,
         ["vlen-utf8", "x = 1", "unknown configuration key"]),
    row!("vb_fixed_size_type", "vlen-bytes", "uint8", "0", &[2], VBYTES, M,
         ["vlen-bytes", "uint8", "fixed size"]),
    row!("vu_chunk_truncated_count", "vlen-utf8", "string", "\"\"", &[2], UTF8, C(&[2, 0]),
         ["vlen-utf8", "2 bytes", "item count"]),
    row!("vu_count_too_large", "vlen-utf8", "string", "\"\"", &[2], UTF8,
         C(&[0xe8, 3, 0, 0, 1, 0, 0, 0, b'a', 1, 0, 0, 0, b'b']),
         ["vlen-utf8", "item count is 1000", "expected 2"]),
    row!("vu_length_past_end", "vlen-utf8", "string", "\"\"", &[2], UTF8,
         C(&[2, 0, 0, 0, 1, 0, 0, 0, b'a', 0xe8, 3, 0, 0, b'b']),
         ["vlen-utf8", "length of element 1 is 1000"]),
    row!("vu_length_field_cut", "vlen-utf8", "string", "\"\"", &[2], UTF8,
         C(&[2, 0, 0, 0, 3, 0, 0, 0, b'a', b'b', b'c', 1, 0]),
         ["vlen-utf8", "length field of element 1", "13 bytes"]),
    row!("vu_trailing_bytes", "vlen-utf8", "string", "\"\"", &[2], UTF8,
         C(&[2, 0, 0, 0, 1, 0, 0, 0, b'a', 1, 0, 0, 0, b'b', 7]),
         ["vlen-utf8", "1 trailing bytes"]),
    row!("vu_invalid_utf8", "vlen-utf8", "string", "\"\"", &[2], UTF8,
         C(&[2, 0, 0, 0, 1, 0, 0, 0, 0xff, 1, 0, 0, 0, b'b']),
         ["vlen-utf8", "element 0 is not valid UTF-8"]),
    row!("vb_count_too_small", "vlen-bytes", "bytes", "[]", &[2], VBYTES,
         C(&[1, 0, 0, 0, 1, 0, 0, 0, b'a']),
         ["vlen-bytes", "item count is 1", "expected 2"]),
];

/// The array metadata of a row.
fn metadata(row: &Row) -> Result<ArrayMetadata, String> {
    let json = format!(
        r#"{{"zarr_format": 3, "node_type": "array", "shape": {shape:?}, "data_type": "{dt}",
            "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": {shape:?}}}}},
            "chunk_key_encoding": {{"name": "default"}}, "fill_value": {fill}, "codecs": {codecs}}}"#,
        shape = row.shape,
        dt = row.data_type,
        fill = row.fill_value,
        codecs = row.codecs,
    );
    serde_json::from_str(&json).map_err(|e| format!("metadata does not parse: {e}"))
}

/// Run a row: `Ok(errors)` with the error of each path, or `Err` if a path
/// accepted the input.
fn run(row: &Row) -> Result<Vec<String>, String> {
    let metadata = metadata(row)?;
    let store = Arc::new(MemoryStore::new());
    let array = match (
        Array::new_with_metadata(store.clone(), "/", metadata),
        row.input,
    ) {
        (Err(e), M) => return Ok(vec![e.to_string()]),
        (Err(e), _) => return Err(format!("the valid metadata of a chunk row is refused: {e}")),
        (Ok(array), _) => array,
    };
    let (chunk, partial) = match row.input {
        M => {
            return match validate_codecs(&array) {
                Err(e) => Ok(vec![e.to_string()]),
                Ok(()) => Err("the metadata is accepted".to_string()),
            };
        }
        C(chunk) => (chunk, true),
        W(chunk) => (chunk, false),
    };
    validate_codecs(&array).map_err(|e| format!("valid metadata of a chunk row: {e}"))?;
    let origin = vec![0; row.shape.len()];
    store
        .set(&array.chunk_key(&origin), Bytes::from(chunk.to_vec()))
        .unwrap();
    let mut errors = vec![];
    match array.retrieve_chunk::<ArrayBytes<'static>>(&origin) {
        Err(e) => errors.push(e.to_string()),
        Ok(_) => return Err("the whole chunk decodes".to_string()),
    }
    if partial {
        // The last element alone, through the partial decoders.
        let last: Vec<u64> = row.shape.iter().map(|&d| d - 1).collect();
        let one = ArraySubset::new_with_start_shape(last, vec![1; row.shape.len()]).unwrap();
        match array.retrieve_chunk_subset::<ArrayBytes<'static>>(&origin, &one) {
            Err(e) => errors.push(e.to_string()),
            Ok(_) => return Err("the last element decodes".to_string()),
        }
    }
    Ok(errors)
}

#[test]
fn every_bad_input_is_an_error_naming_codec_field_and_value() {
    zarrs_extension_codecs::register_overrides();
    // A row that panics is reported below with its message. (The panic hook
    // is left alone: it is the whole test binary's, whose other tests run
    // meanwhile and need theirs.)
    let mut failures = vec![];
    for row in ROWS {
        match catch_unwind(AssertUnwindSafe(|| run(row))) {
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{}: PANICKED: {message}", row.name));
            }
            Ok(Err(accepted)) => failures.push(format!("{}: {accepted}", row.name)),
            Ok(Ok(errors)) => {
                // `BAD_INPUTS_SHOW=1` prints every error, to review the texts.
                if std::env::var_os("BAD_INPUTS_SHOW").is_some() {
                    println!("{}: {}", row.name, errors.join(" || "));
                }
                for error in errors {
                    // The codec's name, then the row's field and value.
                    let missing: Vec<_> = std::iter::once(&row.codec)
                        .chain(row.expect)
                        .filter(|e| !error.contains(**e))
                        .collect();
                    if !missing.is_empty() {
                        failures.push(format!("{}: {missing:?} not in: {error}", row.name));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

/// The catalogue covers every codec of the crate, at least 60 rows in all.
#[test]
fn the_catalogue_covers_every_codec() {
    assert!(ROWS.len() >= 60, "{} rows", ROWS.len());
    for codec in [
        "scale_offset",
        "cast_value",
        "bytes",
        "transpose",
        "packbits",
        "zarrs.vlen",
        "vlen-utf8",
        "vlen-bytes",
    ] {
        let rows = ROWS.iter().filter(|r| r.codec == codec).count();
        assert!(rows > 0, "no row for {codec}");
    }
    let mut names: Vec<_> = ROWS.iter().map(|r| r.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ROWS.len(), "duplicate row names");
}
