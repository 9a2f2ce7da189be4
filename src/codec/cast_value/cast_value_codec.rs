use std::num::NonZeroU64;
use std::sync::{Arc, RwLock};

#[cfg(feature = "async")]
use zarrs::array::codec::api::AsyncArrayPartialDecoderTraits;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayCodecTraits, ArrayPartialDecoderTraits, ArrayToArrayCodecTraits, CodecError,
    CodecMetadataOptions, CodecOptions, CodecTraits, PartialDecoderCapability,
    PartialEncoderCapability, RecommendedConcurrency,
};
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::{CAST_VALUE, CastValueCodecConfiguration};
use crate::codec::parallel::{part_count, try_collect_parts};
use crate::codec::{
    ElementwiseDecode, ElementwisePartialDecoder, check_chunk_len, configuration_from_json,
    fill_value_error, numeric_type, tolerant_fill_value,
};
use crate::kernels::cast::{CastError, CastPlan, ScalarMapBytes};
use crate::numeric::{NumericType, Value};
use crate::scalar::parse_scalar;

/// The `cast_value` codec: converts element values to another real-number type.
#[derive(Debug)]
pub struct CastValueCodec {
    configuration: CastValueCodecConfiguration,
    target: DataType,
    target_numeric: NumericType,
    /// Plans per decoded type (in practice one), built on first use.
    plans: RwLock<Vec<(NumericType, Arc<Plans>)>>,
}

/// Both directions of the cast for one decoded type.
#[derive(Debug)]
struct Plans {
    encode: CastPlan,
    decode: CastPlan,
}

impl CastValueCodec {
    /// Create a `cast_value` codec from a checked configuration.
    ///
    /// # Errors
    /// If the configuration's `data_type` is not a real-number type.
    pub fn new_with_configuration(
        configuration: &CastValueCodecConfiguration,
    ) -> Result<Self, PluginCreateError> {
        let (target, target_numeric) = configuration.target_type()?;
        Ok(Self {
            configuration: configuration.clone(),
            target,
            target_numeric,
            plans: RwLock::new(Vec::new()),
        })
    }

    /// Create a `cast_value` codec from configuration JSON.
    ///
    /// # Errors
    /// If the configuration is invalid; the error names the field and value.
    pub fn new_with_json(configuration: &serde_json::Value) -> Result<Self, PluginCreateError> {
        let configuration = configuration_from_json(CAST_VALUE, configuration)?;
        Self::new_with_configuration(&CastValueCodecConfiguration::parse(&configuration)?)
    }

    /// The configuration.
    #[must_use]
    pub fn configuration(&self) -> &CastValueCodecConfiguration {
        &self.configuration
    }

    /// The plan that decodes stored elements to `decoded` elements: for the
    /// read path that decodes straight into the output (`read::chunk_decode`).
    pub(crate) fn decode_plan(&self, decoded: &DataType) -> Result<CastPlan, CodecError> {
        Ok(self.plans(decoded)?.decode.clone())
    }

    /// The encoding and decoding plans for `decoded` elements.
    fn plans(&self, decoded: &DataType) -> Result<Arc<Plans>, CodecError> {
        let source = numeric_type(CAST_VALUE, decoded)?;
        if let Some((_, plans)) = self
            .plans
            .read()
            .ok()
            .and_then(|cache| cache.iter().find(|(t, _)| *t == source).cloned())
        {
            return Ok(plans);
        }
        let plans = Arc::new(self.build_plans(source)?);
        if let Ok(mut cache) = self.plans.write() {
            cache.push((source, plans.clone()));
        }
        Ok(plans)
    }

    fn build_plans(&self, source: NumericType) -> Result<Plans, CodecError> {
        let target = self.target_numeric;
        let rounding = self.configuration.rounding.unwrap_or_default();
        let out_of_range = self.configuration.out_of_range;
        let map = self.configuration.scalar_map.clone().unwrap_or_default();
        let entries = |direction: &str,
                       entries: Option<Vec<[serde_json::Value; 2]>>,
                       from: NumericType,
                       to: NumericType|
         -> Result<ScalarMapBytes, CodecError> {
            entries
                .unwrap_or_default()
                .iter()
                .map(|[input, output]| {
                    let err = |reason: String| {
                        CodecError::Other(format!(
                            "{CAST_VALUE}: scalar_map.{direction} = [{input}, {output}]: {reason}"
                        ))
                    };
                    Ok((
                        parse_scalar(input, from).map_err(err)?,
                        parse_scalar(output, to).map_err(err)?,
                    ))
                })
                .collect()
        };
        let plan = |direction: &str, from, to, entries| {
            CastPlan::new(from, to, rounding, out_of_range, entries)
                .map_err(|e| CodecError::Other(format!("{CAST_VALUE}: {direction}: {e}")))
        };
        Ok(Plans {
            encode: plan(
                "encode",
                source,
                target,
                entries("encode", map.encode, source, target)?,
            )?,
            decode: plan(
                "decode",
                target,
                source,
                entries("decode", map.decode, target, source)?,
            )?,
        })
    }

    /// Cast a whole chunk of `shape`, checking its length first, on up to
    /// `threads` threads.
    fn cast_chunk(
        plan: &CastPlan,
        bytes: ArrayBytes<'_>,
        shape: &[NonZeroU64],
        direction: &str,
        threads: usize,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        let bytes = bytes.into_fixed()?;
        check_chunk_len(CAST_VALUE, &bytes, shape, plan.source())?;
        Self::cast(plan, &bytes, direction, threads)
    }

    /// Cast whole elements (the length is checked by the caller), split into
    /// parts for up to `threads` threads if the chunk is large enough.
    fn cast(
        plan: &CastPlan,
        bytes: &[u8],
        direction: &str,
        threads: usize,
    ) -> Result<ArrayBytes<'static>, CodecError> {
        let (from, to) = (plan.source().size(), plan.target().size());
        let n = bytes.len() / from;
        let len = n.checked_mul(to).ok_or_else(|| {
            CodecError::Other(format!(
                "{CAST_VALUE}: {direction}: {n} elements of {} do not fit in memory",
                plan.target()
            ))
        })?;
        let parts = part_count(n, from.max(to), threads);
        // SAFETY: `cast_into` writes all of its output when it returns `Ok`.
        let out = unsafe {
            try_collect_parts(len, to, parts, |elements, dst| {
                let src = &bytes[elements.start * from..elements.end * from];
                plan.cast_into(src, dst).map_err(|mut e| {
                    e.index += elements.start;
                    e
                })
            })
        }
        .map_err(|e| cast_error(direction, &e))?;
        Ok(ArrayBytes::from(out))
    }

    /// Cast the fill value with `plans`, and refuse one that does not
    /// survive encode-then-decode (the spec requires this check).
    fn encode_fill_value(
        &self,
        plans: &Plans,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        let source = plans.encode.source();
        let fill = decoded_fill_value.as_ne_bytes();
        if fill.len() != source.size() {
            return Err(CodecError::Other(format!(
                "{CAST_VALUE}: fill value has {} bytes, expected one {source} element",
                fill.len()
            )));
        }
        let shown = source.read_value(fill);
        let encoded = plans.encode.cast_to_vec(fill).map_err(|e| {
            fill_value_error(format!(
                "{CAST_VALUE}: fill value {shown} cannot be encoded: {e}"
            ))
        })?;
        let decoded = plans.decode.cast_to_vec(&encoded).map_err(|e| {
            fill_value_error(format!(
                "{CAST_VALUE}: fill value {shown} encodes to {} which cannot be decoded: {e}",
                self.target_numeric.read_value(&encoded)
            ))
        })?;
        // Floats survive when they compare equal: NaN as NaN, and -0.0 as
        // +0.0. A `scale_offset` with a negative scale in front turns a fill
        // value of 0 into -0.0, which an integer target returns as +0.0;
        // zarr-python (which makes no round-trip check) writes such arrays.
        let round_trips = match (source.read_value(&decoded), shown) {
            (Value::Float(a), Value::Float(b)) => (a.is_nan() && b.is_nan()) || a == b,
            _ => decoded == fill,
        };
        if !round_trips {
            return Err(fill_value_error(format!(
                "{CAST_VALUE}: fill value {shown} does not survive encode then decode ({shown} -> {} -> {})",
                self.target_numeric.read_value(&encoded),
                source.read_value(&decoded)
            )));
        }
        Ok(FillValue::new(encoded))
    }
}

fn cast_error(direction: &str, error: &CastError) -> CodecError {
    CodecError::Other(format!("{CAST_VALUE}: {direction}: {error}"))
}

impl CodecTraits for CastValueCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        Some(self.configuration.to_configuration())
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        // Elementwise: a subset of the chunk decodes from the same subset.
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

impl ArrayCodecTraits for CastValueCodec {
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

impl ElementwiseDecode for CastValueCodec {
    fn decode_elements<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        decoded_data_type: &DataType,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let plans = self.plans(decoded_data_type)?;
        let bytes = bytes.into_fixed()?;
        let source = plans.decode.source();
        if bytes.len() % source.size() != 0 {
            return Err(CodecError::Other(format!(
                "{CAST_VALUE}: decode: {} bytes is not a whole number of {source} elements",
                bytes.len(),
            )));
        }
        Self::cast(&plans.decode, &bytes, "decode", options.concurrent_target())
    }

    /// Cast the fill value, and refuse one that does not survive
    /// encode-then-decode (the spec requires this check).
    fn checked_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        let plans = self.plans(decoded_data_type)?;
        self.encode_fill_value(&plans, decoded_fill_value)
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToArrayCodecTraits for CastValueCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        self.plans(decoded_data_type)?;
        Ok(self.target.clone())
    }

    /// The encoded fill value: lenient here, because zarrs 0.23.14 asks with a
    /// made-up zero fill value; the real one is checked where it is used.
    fn encoded_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        let checked = self.checked_fill_value(decoded_data_type, decoded_fill_value);
        Ok(tolerant_fill_value(checked, self.target_numeric.size()))
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let plans = self.plans(data_type)?;
        self.encode_fill_value(&plans, fill_value)?;
        let threads = options.concurrent_target();
        Self::cast_chunk(&plans.encode, bytes, shape, "encode", threads)
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        // The fill value plays no part in decoding a stored chunk: an array
        // whose fill value does not survive the codecs reads as zarr-python
        // reads it (`codec::FILL_VALUE_CLAUSE`).
        let _ = fill_value;
        let plans = self.plans(data_type)?;
        let threads = options.concurrent_target();
        Self::cast_chunk(&plans.decode, bytes, shape, "decode", threads)
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
