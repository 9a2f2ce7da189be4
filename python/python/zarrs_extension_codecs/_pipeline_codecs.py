"""The codecs of zarr's own pipeline when `CodecPipeline` hands a call to
it: the same chain, with this package's `ScaleOffset` and `CastValue` in
place of zarr's (inside sharding too), whatever ``codecs.*`` selects."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from zarr.codecs.cast_value import CastValue as ZarrCastValue
from zarr.codecs.scale_offset import ScaleOffset as ZarrScaleOffset
from zarr.codecs.sharding import ShardingCodec

from zarrs_extension_codecs._cast_value import CastValue
from zarrs_extension_codecs._scale_offset import ScaleOffset

if TYPE_CHECKING:
    from collections.abc import Iterable

    from zarr.abc.codec import Codec

__all__ = ["with_our_classes"]


def with_our_classes(codecs: Iterable[Codec]) -> tuple[Codec, ...]:
    """`codecs`, with zarr's `ScaleOffset` / `CastValue` swapped for this
    package's (configured alike: made from their JSON)."""
    return tuple(_ours(codec) for codec in codecs)


def _ours(codec: Codec) -> Codec:
    if type(codec) is ZarrScaleOffset:
        return ScaleOffset.from_dict(codec.to_dict())
    if type(codec) is ZarrCastValue:
        return CastValue.from_dict(codec.to_dict())
    if type(codec) is ShardingCodec:
        # Every other field (index location, write order, ...) kept as is.
        return replace(
            codec,
            codecs=with_our_classes(codec.codecs),
            index_codecs=with_our_classes(codec.index_codecs),
        )
    return codec
