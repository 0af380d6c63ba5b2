// Fingerprint throughput (parse + exactness check + RFC 8785 canonicalization + SHA-256) on ~1 KiB
// and ~64 KiB order bodies, and each stage alone, so the time per document can be split by stage.
//
// Bytes processed is the payload's JSON text length for every stage (MB/s of request body), so
// the stages' per-document times add up to the whole fingerprint's.
//
// `bench_fingerprint --emit-doc=1k|64k [--count=N]` prints N documents (seeds 1..N), one per line,
// instead of benchmarking: the SQL comparison loads them so both sides hash the same bytes.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/order_doc.hpp"
#include "core/fingerprint.hpp"
#include "core/hash/sha256.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

namespace {

constexpr std::size_t kSmall = 1024;
constexpr std::size_t kLarge = 64 * 1024;

const std::string& doc_of(std::size_t target) {
  static const std::string small = idem::bench::order_doc(kSmall, 1);
  static const std::string large = idem::bench::order_doc(kLarge, 1);
  return target == kSmall ? small : large;
}

void label(benchmark::State& state, const std::string& doc) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(doc.size()));
  state.counters["doc_bytes"] = static_cast<double>(doc.size());
}

// The whole fingerprint, as idem.payload_hash(text) computes it.
void BM_Fingerprint(benchmark::State& state) {
  const std::string& doc = doc_of(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(idem::fingerprint_text(doc));
  label(state, doc);
}

void BM_Parse(benchmark::State& state) {
  const std::string& doc = doc_of(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(idem::json::parse_strict(doc));
  label(state, doc);
}

void BM_ExactNumbers(benchmark::State& state) {
  const std::string& doc = doc_of(static_cast<std::size_t>(state.range(0)));
  const idem::json::Value parsed = idem::json::parse_strict(doc);
  for (auto _ : state) idem::json::require_exact_numbers(parsed);
  label(state, doc);
}

void BM_Canonicalize(benchmark::State& state) {
  const std::string& doc = doc_of(static_cast<std::size_t>(state.range(0)));
  const idem::json::Value parsed = idem::json::parse_strict(doc);
  for (auto _ : state) benchmark::DoNotOptimize(idem::json::canonicalize(parsed));
  label(state, doc);
}

void BM_Sha256(benchmark::State& state) {
  const std::string& doc = doc_of(static_cast<std::size_t>(state.range(0)));
  const std::string canonical = idem::json::canonicalize(idem::json::parse_strict(doc));
  for (auto _ : state) benchmark::DoNotOptimize(idem::hash::sha256(canonical));
  label(state, doc);
  state.counters["canonical_bytes"] = static_cast<double>(canonical.size());
}

// Arg names the target size; the document is a few bytes over it.
#define IDEM_SIZES ArgName("bytes")->Arg(kSmall)->Arg(kLarge)
BENCHMARK(BM_Fingerprint)->IDEM_SIZES;
BENCHMARK(BM_Parse)->IDEM_SIZES;
BENCHMARK(BM_ExactNumbers)->IDEM_SIZES;
BENCHMARK(BM_Canonicalize)->IDEM_SIZES;
BENCHMARK(BM_Sha256)->IDEM_SIZES;

// --emit-doc=1k|64k [--count=N]: returns -1 when the arguments ask for a benchmark run instead.
int emit_docs(int argc, char** argv) {
  const char* size = nullptr;
  long count = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--emit-doc=", 11) == 0) size = argv[i] + 11;
    if (std::strncmp(argv[i], "--count=", 8) == 0) count = std::strtol(argv[i] + 8, nullptr, 10);
  }
  if (size == nullptr) return -1;
  std::size_t target = 0;
  if (std::strcmp(size, "1k") == 0) target = kSmall;
  if (std::strcmp(size, "64k") == 0) target = kLarge;
  if (target == 0 || count < 1) {
    std::fprintf(stderr, "usage: bench_fingerprint --emit-doc=1k|64k [--count=N]\n");
    return 2;
  }
  for (long seed = 1; seed <= count; ++seed) {
    const std::string doc = idem::bench::order_doc(target, static_cast<std::uint64_t>(seed));
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    std::fputc('\n', stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int rc = emit_docs(argc, argv); rc >= 0) return rc;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
