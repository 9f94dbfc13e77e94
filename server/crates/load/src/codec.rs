//! The compression formats fevlint reads, by name (the decoders are in [`crate::decompress`]).

use std::fmt;

/// A compression format fevlint can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    Zstd,
    /// The `.xz` container (LZMA2 plus optional BCJ/delta filters, e.g. the kernel's
    /// `--x86` payloads).
    Xz,
    Gzip,
    Bzip2,
    /// lz4 legacy frames (`lz4 -l`, magic 0x184C2102, 8 MiB blocks), as the kernel uses.
    Lz4Legacy,
    /// The `.lzma` "alone" format (13-byte header, no container).
    Lzma,
}

impl Codec {
    pub const ALL: [Codec; 6] = [Codec::Zstd, Codec::Xz, Codec::Gzip, Codec::Bzip2, Codec::Lz4Legacy, Codec::Lzma];

    pub fn name(self) -> &'static str {
        match self {
            Codec::Zstd => "zstd",
            Codec::Xz => "xz",
            Codec::Gzip => "gzip",
            Codec::Bzip2 => "bzip2",
            Codec::Lz4Legacy => "lz4 (legacy)",
            Codec::Lzma => "lzma",
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
