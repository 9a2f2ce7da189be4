//! The `scale_offset` codec: glue between zarrs and the kernels.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

#[cfg(feature = "async")]
use zarrs::array::codec::api::AsyncArrayPartialDecoderTraits;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesRaw, ArrayCodecTraits, ArrayPartialDecoderTraits,
    ArrayToArrayCodecTraits, CodecError, CodecMetadataOptions, CodecOptions, CodecTraits,
    PartialDecoderCapability, PartialEncoderCapability, RecommendedConcurrency,
};
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::{SCALE_OFFSET, ScaleOffsetCodecConfiguration};
use crate::codec::parallel::{part_count, try_collect_parts, try_parts};
use crate::codec::{
    ElementwiseDecode, ElementwisePartialDecoder, check_chunk_len, config_error, fill_value_error,
    numeric_type, tolerant_fill_value,
};
use crate::kernels::scale_offset::{
    Direction, ScaleOffsetError, apply_bytes, apply_uninit, encode_bytes, skips,
};
use crate::numeric::{NumericType, Value};
use crate::scalar::parse_scalar;

/// The `scale_offset` codec: `(x - offset) * scale` on encode,
/// `x / scale + offset` on decode, in the arithmetic of the array's data type.
///
/// See the [module documentation](super) for the rules at the edges.
#[derive(Clone, Debug, Default)]
pub struct ScaleOffsetCodec {
    /// The configuration as read; `None` if the metadata had none.
    configuration: Option<ScaleOffsetCodecConfiguration>,
}

impl ScaleOffsetCodec {
    /// Create a `scale_offset` codec from its `offset` and `scale`, each written
    /// in the fill-value JSON encoding of the array's data type, or `None` for
    /// the identity (`0` / `1`). With neither the codec is a no-op and writes
    /// no configuration.
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] if a value is not a scalar of any numeric
    /// data type. Whether it fits the array's data type is checked when the
    /// codec is used with one (see
    /// [`encoded_fill_value`](ArrayToArrayCodecTraits::encoded_fill_value)).
    pub fn new(
        offset: Option<serde_json::Value>,
        scale: Option<serde_json::Value>,
    ) -> Result<Self, PluginCreateError> {
        if offset.is_none() && scale.is_none() {
            return Ok(Self {
                configuration: None,
            });
        }
        Self::new_with_configuration(&ScaleOffsetCodecConfiguration { offset, scale })
    }

    /// Create a `scale_offset` codec from a configuration. The configuration is
    /// written back as given (an empty configuration as `{}`).
    ///
    /// # Errors
    /// Returns [`PluginCreateError`] if `offset` or `scale` is not a scalar of
    /// any numeric data type.
    pub fn new_with_configuration(
        configuration: &ScaleOffsetCodecConfiguration,
    ) -> Result<Self, PluginCreateError> {
        configuration.validate()?;
        Ok(Self {
            configuration: Some(configuration.clone()),
        })
    }

    /// The `offset` as written, if any.
    #[must_use]
    pub fn offset(&self) -> Option<&serde_json::Value> {
        self.configuration.as_ref()?.offset.as_ref()
    }

    /// The `scale` as written, if any.
    #[must_use]
    pub fn scale(&self) -> Option<&serde_json::Value> {
        self.configuration.as_ref()?.scale.as_ref()
    }

    /// `offset` and `scale` as native-endian elements of `data_type` (empty
    /// when absent), checked as a decode checks them: for the read path
    /// that decodes straight into the output (`read::chunk_decode`).
    pub(crate) fn decode_parameters(
        &self,
        data_type: &DataType,
    ) -> Result<(NumericType, Vec<u8>, Vec<u8>), CodecError> {
        let Params {
            data_type,
            offset,
            scale,
        } = self.params(data_type)?;
        Ok((data_type, offset, scale))
    }

    /// `offset` and `scale` parsed for `data_type`, once per chunk (or per
    /// partial decode), for the fill value and the elements alike.
    fn params(&self, data_type: &DataType) -> Result<Params, CodecError> {
        let data_type = numeric_type(SCALE_OFFSET, data_type)?;
        let parse = |field: &str, value: Option<&serde_json::Value>| match value {
            None => Ok(Vec::new()),
            Some(json) => {
                parse_scalar(json, data_type).map_err(|reason| field_error(field, json, reason))
            }
        };
        let offset = parse("offset", self.offset())?;
        let scale = parse("scale", self.scale())?;
        if let Some(json) = self.scale()
            && match data_type.read_value(&scale) {
                Value::Int(v) => v == 0,
                Value::Float(v) => v == 0.0,
            }
        {
            return Err(field_error("scale", json, "the scale must not be zero"));
        }
        // A NaN or infinite `offset` or `scale` maps every value to NaN or
        // infinity, which decoding cannot invert (the specification defines
        // decoding as the inverse of encoding).
        for (field, json, bytes) in [
            ("offset", self.offset(), &offset),
            ("scale", self.scale(), &scale),
        ] {
            if let Some(json) = json
                && matches!(data_type.read_value(bytes), Value::Float(v) if !v.is_finite())
            {
                return Err(field_error(
                    field,
                    json,
                    "must be finite (decoding cannot invert a NaN or infinite parameter)",
                ));
            }
        }
        Ok(Params {
            data_type,
            offset,
            scale,
        })
    }
}

/// `offset` and `scale` as native-endian elements of `data_type` (empty when
/// absent, which the kernels read as the identity).
struct Params {
    data_type: NumericType,
    offset: Vec<u8>,
    scale: Vec<u8>,
}

impl Params {
    /// Apply the transformation to whole elements, split into parts for up
    /// to `threads` threads if the chunk is large enough.
    fn apply<'a>(
        &self,
        direction: Direction,
        bytes: ArrayBytesRaw<'a>,
        threads: usize,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let (data_type, offset, scale) = (self.data_type, &self.offset, &self.scale);
        // The kernel's own rule (floats are decoded even by the identity).
        if skips(direction, data_type, offset, scale) {
            return Ok(ArrayBytes::new_flen(bytes));
        }
        let size = data_type.size();
        let error = |e| kernel_error(direction, data_type, &e);
        let len = bytes.len();
        if !len.is_multiple_of(size) {
            // Before splitting: parts hold whole elements only.
            return Err(error(ScaleOffsetError::DataLength { len, data_type }));
        }
        let parts = part_count(len / size, size, threads);
        let bytes = match bytes {
            // Read the borrowed input and write a new buffer in one pass,
            // rather than copying it (`Cow::to_mut`) and then transforming the
            // copy in place: that would be two passes over the chunk.
            Cow::Borrowed(src) => {
                // SAFETY: `apply_uninit` writes all of its output when it
                // returns `Ok`.
                let out = unsafe {
                    try_collect_parts(src.len(), size, parts, |elements, dst| {
                        let src = &src[elements.start * size..elements.end * size];
                        apply_uninit(direction, data_type, src, dst, offset, scale)
                            .map_err(|e| e.offset_by(elements.start))
                    })
                }
                .map_err(error)?;
                Cow::Owned(out)
            }
            Cow::Owned(mut data) => {
                try_parts(&mut data, size, parts, |elements, part| {
                    apply_bytes(direction, data_type, part, offset, scale)
                        .map_err(|e| e.offset_by(elements.start))
                })
                .map_err(error)?;
                Cow::Owned(data)
            }
        };
        Ok(ArrayBytes::new_flen(bytes))
    }

    /// `encode` / `decode` of a whole chunk of `shape`, on up to `threads`
    /// threads.
    fn apply_chunk<'a>(
        &self,
        direction: Direction,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        threads: usize,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let bytes = bytes.into_fixed()?;
        check_chunk_len(SCALE_OFFSET, &bytes, shape, self.data_type)?;
        self.apply(direction, bytes, threads)
    }

    /// Encode the fill value; an error names the step and value that fail.
    fn encode_fill_value(&self, decoded_fill_value: &FillValue) -> Result<FillValue, CodecError> {
        let data_type = self.data_type;
        let mut bytes = decoded_fill_value.as_ne_bytes().to_vec();
        if bytes.len() != data_type.size() {
            return Err(CodecError::Other(format!(
                "{SCALE_OFFSET}: the fill value has {} bytes, expected one {data_type} element",
                bytes.len()
            )));
        }
        encode_bytes(data_type, &mut bytes, &self.offset, &self.scale).map_err(|e| match e {
            ScaleOffsetError::Element { value, reason, .. } => fill_value_error(format!(
                "{SCALE_OFFSET}: fill value {value} of {data_type}: {reason}"
            )),
            e => kernel_error(Direction::Encode, data_type, &e),
        })?;
        Ok(FillValue::new(bytes))
    }
}

/// An error about a configuration field found when the data type is known,
/// in the shape of [`config_error`].
fn field_error(
    field: &str,
    value: &serde_json::Value,
    reason: impl std::fmt::Display,
) -> CodecError {
    CodecError::Other(config_error(SCALE_OFFSET, field, value, reason).to_string())
}

fn kernel_error(
    direction: Direction,
    data_type: NumericType,
    error: &ScaleOffsetError,
) -> CodecError {
    let direction = match direction {
        Direction::Encode => "encoding",
        Direction::Decode => "decoding",
    };
    CodecError::Other(format!("{SCALE_OFFSET}: {direction} {data_type}: {error}"))
}

impl CodecTraits for ScaleOffsetCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        // Never `None`, even without a configuration: zarrs leaves a codec
        // whose configuration is `None` out of the metadata it writes for a
        // new array. An empty one is written as `{"name": "scale_offset"}`,
        // the form zarr-python writes and reads.
        Some(
            self.configuration
                .as_ref()
                .map(ScaleOffsetCodecConfiguration::to_configuration)
                .unwrap_or_default(),
        )
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        PartialDecoderCapability {
            partial_read: true,
            partial_decode: true,
        }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability {
            partial_encode: false,
        }
    }
}

impl ArrayCodecTraits for ScaleOffsetCodec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        // Threads go to whole chunks when zarrs decodes several; a chunk
        // decoded alone is split by `concurrent_target` (see `parallel`).
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

impl ElementwiseDecode for ScaleOffsetCodec {
    fn decode_elements<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        decoded_data_type: &DataType,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let threads = options.concurrent_target();
        self.params(decoded_data_type)?
            .apply(Direction::Decode, bytes.into_fixed()?, threads)
    }

    /// Encode the fill value; an error names the step and value that fail.
    fn checked_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        self.params(decoded_data_type)?
            .encode_fill_value(decoded_fill_value)
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToArrayCodecTraits for ScaleOffsetCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        numeric_type(SCALE_OFFSET, decoded_data_type)?;
        Ok(decoded_data_type.clone())
    }

    /// The encoded fill value: lenient here, because zarrs 0.23.14 asks with a
    /// made-up zero fill value; the real one is checked where it is used.
    fn encoded_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        let checked = self.checked_fill_value(decoded_data_type, decoded_fill_value);
        Ok(tolerant_fill_value(
            checked,
            decoded_fill_value.as_ne_bytes().len(),
        ))
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let params = self.params(data_type)?;
        params.encode_fill_value(fill_value)?;
        let threads = options.concurrent_target();
        params.apply_chunk(Direction::Encode, bytes, shape, threads)
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        // The fill value plays no part in decoding a stored chunk
        // (`codec::FILL_VALUE_CLAUSE`).
        let _ = fill_value;
        let params = self.params(data_type)?;
        let threads = options.concurrent_target();
        params.apply_chunk(Direction::Decode, bytes, shape, threads)
    }

    fn partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn ArrayPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn ArrayPartialDecoderTraits>, CodecError> {
        Ok(ElementwisePartialDecoder::checked(
            self,
            input_handle,
            shape,
            data_type,
            fill_value,
        )?)
    }

    #[cfg(feature = "async")]
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    async fn async_partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn AsyncArrayPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn AsyncArrayPartialDecoderTraits>, CodecError> {
        Ok(ElementwisePartialDecoder::checked(
            self,
            input_handle,
            shape,
            data_type,
            fill_value,
        )?)
    }
}
