//! Parse + diagnose throughput on a large synthetic mapper (about 5,000 lines
//! built from the accepted corpus files) and latency on the largest real file.
//! Run with `cargo bench -p mapwright-grammar --bench parse`.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mapwright_grammar::format::format;
use mapwright_grammar::{analyze, parse};

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public");
    let expect = std::fs::read_to_string(dir.join("EXPECT")).unwrap_or_default();
    expect
        .lines()
        .filter(|l| l.ends_with(" accept"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .collect()
}

/// Concatenates accepted corpus files until the text has `lines` lines.
pub fn synthetic_mapper(lines: usize) -> String {
    let files = corpus();
    let files = if files.is_empty() {
        vec!["Task * GPU,CPU;\nRegion * * GPU FBMEM;\nm = Machine(GPU);\ndef f(Task t) {\n    return m[t.ipoint[0] % m.size[0], 0];\n}\nIndexTaskMap * f;\n".to_string()]
    } else {
        files
    };
    let mut out = String::new();
    let mut i = 0;
    while out.lines().count() < lines {
        out.push_str(&files[i % files.len()]);
        out.push('\n');
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let big = synthetic_mapper(5_000);
    let mut group = c.benchmark_group("parse+diagnose");
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("synthetic_5000_lines", |b| {
        b.iter(|| parse(std::hint::black_box(&big)))
    });
    group.finish();

    // Syntax plus static semantics (names, types, shadowed rules).
    let mut group = c.benchmark_group("parse+check");
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("synthetic_5000_lines", |b| {
        b.iter(|| analyze(std::hint::black_box(&big)))
    });
    group.finish();

    let largest = corpus()
        .into_iter()
        .max_by_key(|s| s.len())
        .unwrap_or_default();
    let mut group = c.benchmark_group("latency");
    group.throughput(Throughput::Bytes(largest.len() as u64));
    group.bench_function("largest_corpus_file_parse", |b| {
        b.iter(|| parse(std::hint::black_box(&largest)))
    });
    group.bench_function("largest_corpus_file_check", |b| {
        b.iter(|| analyze(std::hint::black_box(&largest)))
    });
    group.bench_function("largest_corpus_file_format", |b| {
        b.iter(|| format(std::hint::black_box(&largest)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
