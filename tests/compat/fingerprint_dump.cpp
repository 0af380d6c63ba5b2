// Prints the fingerprint outcome of a fixed corpus, one line per (input, exclusions): the hash and
// canonical bytes, or the refusal's code and message. Built against two checkouts' core by
// scripts/compare-fingerprint-builds.sh, whose outputs must be identical: the check that a change
// to the fingerprint path (the one-pass canonicalizer) changed no byte and no refusal.
// Uses only API that both sides have: parse_strict, canonicalize, fingerprint_text.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/hash/sha256.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "tests/support/json_gen.hpp"

namespace {

std::string hex(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

void dump(const std::string& text, const std::vector<std::string>& exclude) {
  std::string line = hex(text) + "\t";
  for (const std::string& p : exclude) line += hex(p) + ",";
  line += "\t";
  try {
    const std::string hash = idem::hash::to_hex(idem::fingerprint_text(text, exclude).hash);
    line += "ok " + hash;
  } catch (const idem::Error& e) {
    line += "refused " + std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
  line += "\t";
  try {
    line += "canonical " + hex(idem::json::canonicalize(idem::json::parse_strict(text)));
  } catch (const idem::Error& e) {
    line += "refused " + std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
  std::puts(line.c_str());
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fingerprint_dump FILE_OR_DIR...  (then the generated corpus)\n");
    return 2;
  }
  const std::vector<std::vector<std::string>> exclusions = {
      {}, {"/a"}, {"/0"}, {"/items/0", "/items/1/name"}, {"/customer/address", "/metadata/note"},
      {"/a/b", "/a"}, {"/0/1", "/1/0", "/0"}, {"/", "/-", "/01"}, {"/~2"}, {""}, {"/payment/amount"}};
  // Every file named (directories: every file inside), with each exclusion set.
  for (int i = 1; i < argc; ++i) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i])) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(argv[i]);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string text = slurp(f);
      for (const auto& ex : exclusions) dump(text, ex);
    }
  }
  for (const std::string& edge : idem::testing::edge_cases()) {
    for (const auto& ex : exclusions) dump(edge, ex);
  }
  idem::testing::Rng rng(424242);
  for (int i = 0; i < 20000; ++i) {
    std::string doc = idem::testing::gen_document(rng);
    if (i % 2) doc = idem::testing::mutate(rng, doc);
    dump(doc, exclusions[rng.below(exclusions.size())]);
  }
  return 0;
}
