//! Decompressors against samples made by the reference tools, bombs, corruption.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fevlint_load::decompress::{decompress, decompress_auto, decompress_sized, detect};
use fevlint_load::{Codec, Limits, LoadError, Origin};

fn fixture(name: &str) -> PathBuf {
    fevlint_testkit::repo().join("fixtures/compressed").join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).expect("fixture present")
}

const SAMPLES: &[(&str, Codec)] = &[
    ("text.bin.x86.xz", Codec::Xz),
    ("text.bin.xz", Codec::Xz),
    ("text.bin.lzma", Codec::Lzma),
    ("text.bin.gz", Codec::Gzip),
    ("text.bin.bz2", Codec::Bzip2),
    ("text.bin.lz4", Codec::Lz4Legacy),
    ("text.bin.zst", Codec::Zstd),
];

#[test]
fn every_reference_sample_decodes_to_the_original() {
    let want = read("text.bin");
    assert_eq!(want.len(), 65536);
    for &(name, codec) in SAMPLES {
        let data = read(name);
        assert_eq!(detect(&data), Some(codec), "{name}");
        let path = fixture(name);
        let got =
            decompress(&data, codec, &Limits::default(), Origin::file(&path)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got == want, "{name}: decoded {} bytes, differs from text.bin", got.len());
    }
    // Plain bytes have no codec.
    assert_eq!(detect(&want), None);
    let p = fixture("text.bin");
    assert!(decompress_auto(&want, &Limits::default(), Origin::file(&p)).expect("ok").is_none());
}

#[test]
fn the_x86_bcj_filter_is_applied() {
    // Without BCJ decoding, the e8/e9 operands would stay absolute: the output would
    // differ from text.bin in many places. Check the sample really uses the filter.
    let data = read("text.bin.x86.xz");
    let plain = read("text.bin.xz");
    assert!(data.len() + 2000 < plain.len(), "BCJ sample should compress better");
    let p = fixture("text.bin.x86.xz");
    let got = decompress(&data, Codec::Xz, &Limits::default(), Origin::file(&p)).expect("ok");
    assert_eq!(got, read("text.bin"));
}

fn zeros_compressed(codec: Codec, len: usize) -> Vec<u8> {
    let zeros = vec![0u8; len];
    match codec {
        Codec::Zstd => zstd::encode_all(&zeros[..], 1).expect("mem"),
        Codec::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(&zeros).expect("mem");
            e.finish().expect("mem")
        }
        Codec::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
            e.write_all(&zeros).expect("mem");
            e.finish().expect("mem")
        }
        Codec::Xz => {
            let mut opts = lzma_rust2::XzOptions::with_preset(1);
            opts.prepend_pre_filter(lzma_rust2::FilterType::BcjX86, 0);
            let mut w = lzma_rust2::XzWriter::new(Vec::new(), opts).expect("mem");
            w.write_all(&zeros).expect("mem");
            w.finish().expect("mem")
        }
        Codec::Lzma => {
            let opts = lzma_rust2::LzmaOptions::with_preset(1);
            let mut w = lzma_rust2::LzmaWriter::new_use_header(Vec::new(), &opts, None).expect("mem");
            w.write_all(&zeros).expect("mem");
            w.finish().expect("mem")
        }
        Codec::Lz4Legacy => {
            let mut out = 0x184C_2102u32.to_le_bytes().to_vec();
            for chunk in zeros.chunks(8 << 20) {
                let b = lz4_flex::block::compress(chunk);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(&b);
            }
            out
        }
    }
}

const ALL: [Codec; 6] = [Codec::Zstd, Codec::Xz, Codec::Gzip, Codec::Bzip2, Codec::Lz4Legacy, Codec::Lzma];

#[test]
fn encoders_round_trip_multi_block() {
    // 20 MiB: three lz4 legacy blocks, several bzip2 blocks.
    for codec in ALL {
        let data = zeros_compressed(codec, 20 << 20);
        assert_eq!(detect(&data), Some(codec));
        let p = PathBuf::from(format!("zeros.{codec}"));
        let got =
            decompress(&data, codec, &Limits::default(), Origin::file(&p)).unwrap_or_else(|e| panic!("{codec}: {e}"));
        assert_eq!(got.len(), 20 << 20, "{codec}");
        assert!(got.iter().all(|&b| b == 0), "{codec}");
    }
}

#[test]
fn a_wrong_size_costs_time_not_correctness() {
    // Zeros compress far beyond the first 5x guess, so a size that is believed but short
    // leaves zstd's one pass without room: it streams instead. Sizes a byte off are not
    // believed here (over 32x the input), nor is 1 TiB.
    for codec in ALL {
        let data = zeros_compressed(codec, 1 << 20);
        let short = data.len() as u64 * 10;
        for size in [0, short, (1 << 20) - 1, (1 << 20) + 1, 1 << 40] {
            let got = decompress_sized(&data, codec, Some(size), &Limits::default(), Origin::file(Path::new("zeros")));
            assert!(got.is_ok_and(|g| g.len() == 1 << 20 && g.iter().all(|&b| b == 0)), "{codec} with size {size}");
        }
    }
}

#[test]
fn a_decompression_bomb_hits_the_cap() {
    let limits = Limits { max_output: 1 << 20, ..Limits::default() };
    for codec in ALL {
        let data = zeros_compressed(codec, 16 << 20);
        let p = PathBuf::from(format!("bomb.{codec}"));
        let t = Instant::now();
        let Err(err) = decompress(&data, codec, &limits, Origin { path: &p, base: 100 }) else {
            panic!("{codec}: must hit the cap");
        };
        match &err {
            LoadError::TooLarge { path, limit, offset, .. } => {
                assert_eq!(path, &p);
                assert_eq!(*limit, 1 << 20);
                assert_eq!(offset.0, 100);
            }
            other => panic!("{codec}: wrong error {other}"),
        }
        assert!(err.to_string().contains("bomb."), "{err}");
        assert!(t.elapsed().as_secs() < 5, "{codec} took {:?}", t.elapsed());
    }
}

#[test]
fn exactly_the_cap_is_allowed() {
    let limits = Limits { max_output: 1 << 20, ..Limits::default() };
    for codec in ALL {
        let data = zeros_compressed(codec, 1 << 20);
        let p = PathBuf::from("exact");
        let got = decompress(&data, codec, &limits, Origin::file(&p)).unwrap_or_else(|e| panic!("{codec}: {e}"));
        assert_eq!(got.len(), 1 << 20);
    }
}

fn expect_corrupt(name: &str, data: &[u8], codec: Codec) -> LoadError {
    let p = fixture(name);
    let t = Instant::now();
    let Err(err) = decompress(data, codec, &Limits::default(), Origin { path: &p, base: 1000 }) else {
        panic!("{name}: decoded without error");
    };
    assert!(t.elapsed().as_secs() < 5);
    assert_eq!(err.path(), p.as_path());
    let msg = err.to_string();
    assert!(msg.contains(name), "{msg}");
    let off = err.offset().unwrap_or_else(|| panic!("{name}: no offset in {msg}")).0;
    assert!((1000..=1000 + data.len() as u64).contains(&off), "{name}: offset {off} ({msg})");
    err
}

#[test]
fn truncated_streams_are_errors_with_offsets() {
    for &(name, codec) in SAMPLES {
        let data = read(name);
        for keep in [data.len() / 2, data.len() - 1] {
            let err = expect_corrupt(name, &data[..keep], codec);
            assert!(matches!(err, LoadError::Corrupt { .. }), "{name}: {err}");
        }
    }
}

#[test]
fn flipped_bytes_in_checksummed_streams_are_errors() {
    // lz4 legacy and .lzma carry no checksum: a flipped literal decodes "fine". The
    // others check a CRC (zstd -19 writes its content checksum by default).
    for &(name, codec) in SAMPLES {
        if matches!(codec, Codec::Lz4Legacy | Codec::Lzma) {
            continue;
        }
        let mut data = read(name);
        let mid = data.len() / 2;
        data[mid] ^= 0x55;
        data[mid + 1] ^= 0xAA;
        expect_corrupt(name, &data, codec);
    }
}

#[test]
fn lz4_bad_block_size_and_kernel_trailer() {
    let name = "text.bin.lz4";
    let data = read(name);
    // A block size larger than LZ4_compressBound(8 MiB).
    let mut bad = data.clone();
    bad[4..8].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let err = expect_corrupt(name, &bad, Codec::Lz4Legacy);
    assert_eq!(err.offset().map(|o| o.0), Some(1004));

    // The kernel's size_append trailer is accepted when it matches and rejected when not.
    let p = fixture(name);
    let mut with = data.clone();
    with.extend_from_slice(&65536u32.to_le_bytes());
    let got = decompress(&with, Codec::Lz4Legacy, &Limits::default(), Origin::file(&p)).expect("trailer matches");
    assert_eq!(got.len(), 65536);
    let mut wrong = data;
    wrong.extend_from_slice(&65535u32.to_le_bytes());
    let err = decompress(&wrong, Codec::Lz4Legacy, &Limits::default(), Origin::file(&p)).expect_err("trailer mismatch");
    assert!(matches!(err, LoadError::SizeMismatch { .. }), "{err}");
}

#[test]
fn trailing_garbage_is_an_error() {
    for &(name, codec) in SAMPLES {
        if codec == Codec::Lz4Legacy {
            continue; // four trailing bytes are the kernel trailer; tested above
        }
        let mut data = read(name);
        data.extend_from_slice(b"garbage!garbage!");
        if codec == Codec::Lzma {
            // FIXME(load): `xz -d --format=lzma` rejects trailing bytes after the end
            // marker; lzma-rust2's range decoder reads its input ahead, so the bytes it
            // left are not visible here. The output is still exact.
            let p = fixture(name);
            let got = decompress(&data, codec, &Limits::default(), Origin::file(&p));
            assert_eq!(got.expect("accepted today").len(), 65536);
            continue;
        }
        expect_corrupt(name, &data, codec);
    }
}

#[test]
fn an_lzma_header_claiming_huge_sizes_is_refused_without_allocating() {
    // props 0x5d, dictionary 0xffffffff (4 GiB), uncompressed size 10 GB.
    let mut data = vec![0x5d];
    data.extend_from_slice(&u32::MAX.to_le_bytes());
    data.extend_from_slice(&10_000_000_000u64.to_le_bytes());
    data.extend_from_slice(&[0u8; 64]);
    assert_eq!(detect(&data), Some(Codec::Lzma));
    let p = PathBuf::from("huge.lzma");
    let t = Instant::now();
    let err = decompress(&data, Codec::Lzma, &Limits::default(), Origin::file(&p))
        .expect_err("dictionary over the memory limit");
    assert!(t.elapsed().as_millis() < 500, "{:?}", t.elapsed());
    assert!(matches!(err, LoadError::Corrupt { .. }), "{err}");
}

#[test]
fn zstd_skippable_frames_and_concatenation() {
    let one = read("text.bin.zst");
    let mut data = vec![0x50, 0x2a, 0x4d, 0x18];
    data.extend_from_slice(&3u32.to_le_bytes());
    data.extend_from_slice(b"abc");
    data.extend_from_slice(&one);
    data.extend_from_slice(&one);
    assert_eq!(detect(&data), Some(Codec::Zstd));
    let p = fixture("concat");
    let got = decompress(&data, Codec::Zstd, &Limits::default(), Origin::file(&p)).expect("ok");
    assert_eq!(got.len(), 2 * 65536);
    assert_eq!(&got[..65536], &got[65536..]);
}
