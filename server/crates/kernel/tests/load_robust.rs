//! Every reader on truncated, corrupted or lying inputs: an error naming the file and
//! the offset, quickly, with no panic and no allocation sized by a claimed count.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fevlint_kernel::open::{open_with, OpenOptions};
use fevlint_load::bzimage::{extract_vmlinux, parse_header};
use fevlint_load::decompress::decompress;
use fevlint_load::{Codec, Limits, LoadError, Origin};

const FAST: Duration = Duration::from_secs(10);

fn compressed(name: &str) -> Vec<u8> {
    let p = fevlint_testkit::repo().join("fixtures/compressed").join(name);
    std::fs::read(p).expect("fixture")
}

/// A bzImage with the real 6.12 setup code and `payload` in place of its zstd payload.
fn bzimage_with(payload: &[u8]) -> Vec<u8> {
    let (_, real) = fevlint_testkit::vmlinuz_612();
    let start = 21_196;
    let mut img = real[..start].to_vec();
    img.extend_from_slice(payload);
    img[0x24c..0x250].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    img
}

#[test]
fn bzimage_payloads_in_every_codec() {
    let want = compressed("text.bin");
    for (file, codec) in [
        ("text.bin.x86.xz", Codec::Xz),
        ("text.bin.lzma", Codec::Lzma),
        ("text.bin.gz", Codec::Gzip),
        ("text.bin.bz2", Codec::Bzip2),
        ("text.bin.lz4", Codec::Lz4Legacy),
        ("text.bin.zst", Codec::Zstd),
    ] {
        let mut payload = compressed(file);
        if codec != Codec::Gzip {
            // The kernel's size_append.
            payload.extend_from_slice(&(want.len() as u32).to_le_bytes());
        }
        let img = bzimage_with(&payload);
        let p = PathBuf::from(format!("bz.{file}"));
        let h = parse_header(&img, &p).expect("header");
        assert_eq!(h.codec, codec);
        let (_, out) = extract_vmlinux(&img, &p, &Limits::default()).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(out, want, "{file}");

        // A wrong trailer is caught.
        if codec != Codec::Gzip {
            let mut bad = payload.clone();
            let n = bad.len();
            bad[n - 4..].copy_from_slice(&1234u32.to_le_bytes());
            let err = extract_vmlinux(&bzimage_with(&bad), &p, &Limits::default()).expect_err("trailer mismatch");
            assert!(matches!(err, LoadError::SizeMismatch { .. }), "{file}: {err}");
        }
    }
}

#[test]
fn truncated_bzimage_headers() {
    let (path, data) = fevlint_testkit::vmlinuz_612();
    for keep in [0, 0x100, 0x203, 0x250] {
        let err = parse_header(&data[..keep], &path).expect_err("truncated");
        assert!(matches!(err, LoadError::BzImage { .. }), "{keep}: {err}");
        assert!(err.to_string().contains("vmlinuz"), "{err}");
        assert!(err.offset().is_some());
    }
    // Header intact, payload cut: the payload no longer fits in the file.
    let err = parse_header(&data[..1_000_000], &path).expect_err("payload past end");
    assert_eq!(err.offset().map(|o| o.0), Some(0x248), "{err}");
    // An old protocol without payload fields.
    let mut old = data[..4096].to_vec();
    old[0x206..0x208].copy_from_slice(&0x0206u16.to_le_bytes());
    let err = parse_header(&old, &path).expect_err("old protocol");
    assert_eq!(err.offset().map(|o| o.0), Some(0x206), "{err}");
    // A payload whose magic is unknown (no scanning for a magic further on).
    let mut nomagic = data.clone();
    nomagic[21_196..21_200].copy_from_slice(b"JUNK");
    let err = parse_header(&nomagic, &path).expect_err("no magic");
    assert_eq!(err.offset().map(|o| o.0), Some(21_196), "{err}");
}

#[test]
fn corrupted_zstd_payload() {
    let (path, mut data) = fevlint_testkit::vmlinuz_612();
    let at = 21_196 + 5_000_000;
    for b in &mut data[at..at + 64] {
        *b ^= 0x5a;
    }
    let t = Instant::now();
    let err = extract_vmlinux(&data, &path, &Limits::default()).expect_err("corrupt");
    assert!(t.elapsed() < FAST, "{:?}", t.elapsed());
    let off = err.offset().expect("offset").0;
    assert!(matches!(err, LoadError::Corrupt { codec: Codec::Zstd, .. }), "{err}");
    // The error points into the payload, at or after the damage's frame block.
    assert!((21_196..21_196 + 11_838_000).contains(&off), "{off} {err}");
    assert!(err.to_string().contains("vmlinuz"), "{err}");
}

#[test]
fn output_cap_on_the_real_vmlinuz() {
    let (path, data) = fevlint_testkit::vmlinuz_612();
    let t = Instant::now();
    let err = extract_vmlinux(&data, &path, &Limits { max_output: 8 << 20, ..Limits::default() }).expect_err("cap");
    assert!(t.elapsed() < FAST);
    assert!(matches!(err, LoadError::TooLarge { .. }), "{err}");
    assert_eq!(err.offset().map(|o| o.0), Some(21_196));
    // And through open().
    let opts = OpenOptions { limits: Limits { max_output: 8 << 20, ..Limits::default() }, ..OpenOptions::default() };
    let err = open_with(&path, &opts).expect_err("cap");
    assert!(matches!(err, LoadError::TooLarge { .. }), "{err}");
}

#[test]
fn a_zstd_frame_claiming_ten_gigabytes() {
    // Frame header: single-segment flag with an 8-byte content size of 10 GB, then one
    // raw block of 4 bytes marked last. The claimed size must not drive an allocation.
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    f.extend_from_slice(&10_000_000_000u64.to_le_bytes());
    let block_header: u32 = (4 << 3) | 1; // raw, last
    f.extend_from_slice(&block_header.to_le_bytes()[..3]);
    f.extend_from_slice(b"abcd");
    let p = PathBuf::from("ten-gb.zst");
    let t = Instant::now();
    let r = decompress(&f, Codec::Zstd, &Limits::default(), Origin::file(&p));
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // The claim is not believed for the output buffer, and as the window of a
    // single-segment frame it is over the 256 MiB limit: no 10 GB buffer is made.
    let err = r.expect_err("10 GB window");
    assert!(matches!(err, LoadError::Corrupt { codec: Codec::Zstd, .. }), "{err}");
    assert!(err.to_string().contains("too much memory"), "{err}");
}

#[test]
fn random_bytes_everywhere() {
    let mut x: u64 = 0x1234_5678;
    let mut random = Vec::with_capacity(1 << 16);
    for _ in 0..(1 << 16) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        random.push(x as u8);
    }
    let p = Path::new("random.bin");
    for codec in [Codec::Zstd, Codec::Xz, Codec::Gzip, Codec::Bzip2, Codec::Lz4Legacy, Codec::Lzma] {
        // Give each decoder its magic followed by noise.
        let mut data = match codec {
            Codec::Zstd => vec![0x28, 0xb5, 0x2f, 0xfd],
            Codec::Xz => vec![0xfd, b'7', b'z', b'X', b'Z', 0],
            Codec::Gzip => vec![0x1f, 0x8b, 8, 0],
            Codec::Bzip2 => b"BZh9".to_vec(),
            Codec::Lz4Legacy => vec![0x02, 0x21, 0x4c, 0x18],
            Codec::Lzma => vec![0x5d, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        };
        data.extend_from_slice(&random);
        let t = Instant::now();
        let r = decompress(&data, codec, &Limits { max_output: 64 << 20, ..Limits::default() }, Origin::file(p));
        assert!(t.elapsed() < FAST, "{codec}: {:?}", t.elapsed());
        let err = r.expect_err("noise is not a valid stream");
        assert_eq!(err.path(), p, "{codec}");
        assert!(err.offset().is_some(), "{codec}: {err}");
    }
}
