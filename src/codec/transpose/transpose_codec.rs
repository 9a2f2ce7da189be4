//! The `transpose` codec: glue between zarrs and the permutation kernels.

use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(feature = "async")]
use zarrs::array::codec::api::AsyncArrayPartialDecoderTraits;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayBytesOptional, ArrayCodecTraits, ArrayPartialDecoderTraits,
    ArrayToArrayCodecTraits, CodecError, CodecMetadataOptions, CodecOptions, CodecTraits,
    PartialDecoderCapability, PartialEncoderCapability, RecommendedConcurrency,
};
use zarrs::array::{ChunkShape, DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::transpose_partial_decoder::TransposePartialDecoder;
use super::{TRANSPOSE, TransposeCodecConfiguration, TransposeOrder};
use crate::kernels::transpose::{
    TransposeError, inverse_permutation, permute_bytes_to_vec, permute_shape, permute_variable,
    preserves_layout,
};

/// No chunk shape seen yet.
const UNSEEN: usize = usize::MAX;
/// Chunk shapes of different dimensionalities seen.
const MIXED: usize = usize::MAX - 1;

/// The `transpose` codec: permutes the axes of a chunk.
///
/// See the [module documentation](super) for `"C"` / `"F"` and what is
/// written back.
#[derive(Debug)]
pub struct TransposeCodec {
    order: TransposeOrder,
    /// The dimensionality of the chunks met so far ([`UNSEEN`], [`MIXED`] or
    /// a number), so that `"C"` / `"F"` can be written back as a permutation.
    dimensionality: AtomicUsize,
}

impl Clone for TransposeCodec {
    fn clone(&self) -> Self {
        Self {
            order: self.order.clone(),
            dimensionality: AtomicUsize::new(self.dimensionality.load(Ordering::Relaxed)),
        }
    }
}

impl TransposeCodec {
    /// A `transpose` codec with an explicit permutation: axis `i` of the
    /// encoded chunk is axis `order[i]` of the decoded chunk.
    ///
    /// # Errors
    /// [`PluginCreateError`] if `order` is not a permutation of
    /// `0..order.len()`.
    pub fn new(order: Vec<usize>) -> Result<Self, PluginCreateError> {
        Ok(Self::with_order(TransposeOrder::new(order)?))
    }

    /// A `transpose` codec from its configuration.
    ///
    /// # Errors
    /// [`PluginCreateError`] if an explicit `order` is not a permutation.
    pub fn new_with_configuration(
        configuration: &TransposeCodecConfiguration,
    ) -> Result<Self, PluginCreateError> {
        let order = match &configuration.order {
            TransposeOrder::Permutation(order) => TransposeOrder::new(order.clone())?,
            order => order.clone(),
        };
        Ok(Self::with_order(order))
    }

    fn with_order(order: TransposeOrder) -> Self {
        Self {
            order,
            dimensionality: AtomicUsize::new(UNSEEN),
        }
    }

    /// The `order` as read.
    #[must_use]
    pub fn order(&self) -> &TransposeOrder {
        &self.order
    }

    /// The permutation for chunks of `dimensionality` dimensions.
    ///
    /// # Errors
    /// [`CodecError`] naming the codec, `order` and its value if an explicit
    /// permutation has another length.
    pub fn permutation(&self, dimensionality: usize) -> Result<Vec<usize>, CodecError> {
        self.order
            .permutation(dimensionality)
            .map_err(CodecError::Other)
    }

    /// [`permutation`](Self::permutation) for a chunk shape the codec meets,
    /// remembering its dimensionality for `"C"` / `"F"`.
    fn resolve(&self, dimensionality: usize) -> Result<Vec<usize>, CodecError> {
        let permutation = self.permutation(dimensionality)?;
        if !matches!(self.order, TransposeOrder::Permutation(_)) {
            self.remember(dimensionality);
        }
        Ok(permutation)
    }

    /// Record the dimensionality of a chunk for [`CodecTraits::configuration`].
    fn remember(&self, dimensionality: usize) {
        let dimensionality = dimensionality.min(MIXED - 1);
        if let Err(seen) = self.dimensionality.compare_exchange(
            UNSEEN,
            dimensionality,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) && seen != dimensionality
        {
            self.dimensionality.store(MIXED, Ordering::Relaxed);
        }
    }

    /// The `order` to write: the explicit permutation whenever it is known.
    fn order_to_write(&self) -> TransposeOrder {
        match self.dimensionality.load(Ordering::Relaxed) {
            UNSEEN | MIXED => self.order.clone(),
            n => self
                .order
                .permutation(n)
                .map_or_else(|_| self.order.clone(), TransposeOrder::Permutation),
        }
    }
}

/// `shape` as `usize`s.
fn shape_usize(shape: &[NonZeroU64]) -> Result<Vec<usize>, CodecError> {
    shape
        .iter()
        .map(|d| usize::try_from(d.get()))
        .collect::<Result<_, _>>()
        .map_err(|_| CodecError::Other(format!("{TRANSPOSE}: chunk shape {shape:?} is too large")))
}

fn kernel_error(error: &TransposeError) -> CodecError {
    CodecError::Other(format!("{TRANSPOSE}: {error}"))
}

/// Permute `bytes`, a C-order array of `shape` elements of `data_type`:
/// axis `i` of the result is axis `perm[i]` of `bytes`. Fixed-size,
/// variable-length and optional data are supported; a permutation that
/// keeps the layout returns `bytes` without a copy.
pub(super) fn permute_array_bytes<'a>(
    bytes: ArrayBytes<'a>,
    shape: &[usize],
    perm: &[usize],
    data_type: &DataType,
) -> Result<ArrayBytes<'a>, CodecError> {
    let num_elements = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| kernel_error(&TransposeError::Overflow))?;
    let identity = preserves_layout(shape, perm);
    match (bytes, data_type.as_optional()) {
        (ArrayBytes::Optional(optional), Some(optional_type)) => {
            let (data, mask) = optional.into_parts();
            if mask.len() != num_elements {
                return Err(CodecError::Other(format!(
                    "{TRANSPOSE}: the validity mask has {} bytes, expected {num_elements}",
                    mask.len()
                )));
            }
            let data = permute_array_bytes(*data, shape, perm, optional_type.data_type())?;
            if identity {
                return Ok(ArrayBytes::Optional(ArrayBytesOptional::new(data, mask)));
            }
            let permuted =
                permute_bytes_to_vec(&mask, shape, perm, 1).map_err(|e| kernel_error(&e))?;
            Ok(ArrayBytes::Optional(ArrayBytesOptional::new(
                data, permuted,
            )))
        }
        (ArrayBytes::Fixed(bytes), None) => {
            let Some(size) = data_type.fixed_size() else {
                return Err(mismatch(data_type, "fixed-size"));
            };
            let expected = num_elements.checked_mul(size);
            if expected != Some(bytes.len()) {
                return Err(CodecError::Other(format!(
                    "{TRANSPOSE}: chunk has {} bytes, expected {num_elements} elements of \
                     {size} bytes",
                    bytes.len()
                )));
            }
            if identity {
                return Ok(ArrayBytes::Fixed(bytes));
            }
            let permuted =
                permute_bytes_to_vec(&bytes, shape, perm, size).map_err(|e| kernel_error(&e))?;
            Ok(ArrayBytes::new_flen(permuted))
        }
        (ArrayBytes::Variable(variable), None) => {
            if data_type.fixed_size().is_some() {
                return Err(mismatch(data_type, "variable-length"));
            }
            // zarrs guarantees non-decreasing offsets within the bytes; the
            // count is checked here (and everything again by the kernel).
            if identity && variable.offsets().len() == num_elements.saturating_add(1) {
                return Ok(ArrayBytes::Variable(variable));
            }
            let (bytes, offsets) = variable.into_parts();
            let (permuted, permuted_offsets) =
                permute_variable(&bytes, &offsets, shape, perm).map_err(|e| kernel_error(&e))?;
            let offsets = ArrayBytesOffsets::new(permuted_offsets)
                .map_err(|e| CodecError::Other(format!("{TRANSPOSE}: {e}")))?;
            ArrayBytes::new_vlen(permuted, offsets)
                .map_err(|e| CodecError::Other(format!("{TRANSPOSE}: {e}")))
        }
        (bytes, _) => {
            let kind = match bytes {
                ArrayBytes::Fixed(_) => "fixed-size",
                ArrayBytes::Variable(_) => "variable-length",
                ArrayBytes::Optional(_) => "optional",
            };
            Err(mismatch(data_type, kind))
        }
    }
}

fn mismatch(data_type: &DataType, kind: &str) -> CodecError {
    CodecError::Other(format!(
        "{TRANSPOSE}: got {kind} chunk bytes for data type {data_type}"
    ))
}

impl CodecTraits for TransposeCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// The configuration, with `order` written as an explicit permutation
    /// whenever it is known, so that every implementation can read it.
    ///
    /// `"C"` / `"F"` name a permutation only together with the chunk's
    /// dimensionality, and zarrs asks for the configuration without a shape
    /// (`ArrayBuilder` does so before any chunk exists). So they are written
    /// as the permutation once this codec has met a chunk shape (through
    /// `encoded_shape`, `encode`, `decode`, a partial decoder, or
    /// [`validate_codecs`](crate::validate_codecs)), and as read before that
    /// or if it has met several dimensionalities.
    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        Some(
            TransposeCodecConfiguration {
                order: self.order_to_write(),
            }
            .to_configuration(),
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

impl ArrayCodecTraits for TransposeCodec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

#[cfg_attr(feature = "async", async_trait::async_trait)]
impl ArrayToArrayCodecTraits for TransposeCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    /// Every data type: the codec moves whole elements.
    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        Ok(decoded_data_type.clone())
    }

    /// The fill value is unchanged. (The default would encode a one-element
    /// chunk of one dimension, which an explicit `order` of another length
    /// refuses.)
    fn encoded_fill_value(
        &self,
        _decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        Ok(decoded_fill_value.clone())
    }

    fn encoded_shape(&self, decoded_shape: &[NonZeroU64]) -> Result<ChunkShape, CodecError> {
        let perm = self.resolve(decoded_shape.len())?;
        permute_shape(decoded_shape, &perm).map_err(|e| kernel_error(&e))
    }

    fn decoded_shape(
        &self,
        encoded_shape: &[NonZeroU64],
    ) -> Result<Option<ChunkShape>, CodecError> {
        let perm = self.resolve(encoded_shape.len())?;
        let inverse = inverse_permutation(&perm).map_err(|e| kernel_error(&e))?;
        permute_shape(encoded_shape, &inverse)
            .map(Some)
            .map_err(|e| kernel_error(&e))
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let perm = self.resolve(shape.len())?;
        permute_array_bytes(bytes, &shape_usize(shape)?, &perm, data_type)
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let perm = self.resolve(shape.len())?;
        let encoded_shape =
            permute_shape(&shape_usize(shape)?, &perm).map_err(|e| kernel_error(&e))?;
        let inverse = inverse_permutation(&perm).map_err(|e| kernel_error(&e))?;
        permute_array_bytes(bytes, &encoded_shape, &inverse, data_type)
    }

    fn partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn ArrayPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn ArrayPartialDecoderTraits>, CodecError> {
        let perm = self.resolve(shape.len())?;
        Ok(Arc::new(TransposePartialDecoder::new(
            input_handle,
            perm,
            data_type.clone(),
        )?))
    }

    #[cfg(feature = "async")]
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    async fn async_partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn AsyncArrayPartialDecoderTraits>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn AsyncArrayPartialDecoderTraits>, CodecError> {
        let perm = self.resolve(shape.len())?;
        Ok(Arc::new(TransposePartialDecoder::new(
            input_handle,
            perm,
            data_type.clone(),
        )?))
    }
}
