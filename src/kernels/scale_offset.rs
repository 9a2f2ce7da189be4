//! `scale_offset` arithmetic: `(x - offset) * scale` and `x / scale + offset`.
