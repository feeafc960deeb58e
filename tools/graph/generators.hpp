#pragma once
/// @file
/// The synthetic graphs of the GAP benchmark suite, as pure functions of (seed, edge index):
/// any edge can be regenerated alone, on any thread, in any order, which is what lets the
/// generator build a file larger than memory in two passes over the same edges.
///
/// - kron: Graph500 R-MAT (A = 0.57, B = C = 0.19, D = 0.05) over 2^scale vertices; vertex
///   ids then go through a seeded bijection so the hubs are spread over the id space.
/// - urand: both endpoints uniform over 2^scale vertices (Erdős–Rényi-like).

#include <array>
#include <cstdint>

namespace bam::graph {

/// SplitMix64's output function: a bijection on 64-bit words with full avalanche, used as a
/// counter-based generator (hash of a counter) rather than as a sequential state update.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// The random words of one edge: word k of edge e under `key` is a fixed hash of (key, e, k).
class edge_random {
 public:
  constexpr edge_random(std::uint64_t key, std::uint64_t edge)
      : state_(mix64(key + edge * 0x9e3779b97f4a7c15ULL)) {}
  constexpr std::uint64_t next() {
    state_ += 0xd1b54a32d192ed03ULL;  // odd, so the k-th word of every edge differs
    return mix64(state_);
  }

 private:
  std::uint64_t state_;
};

/// A seeded bijection on [0, 2^bits): rounds of (multiply by an odd number, xor a key,
/// xorshift), each a bijection modulo 2^bits, so no two vertices share an id.
class vertex_permutation {
 public:
  constexpr vertex_permutation(unsigned bits, std::uint64_t seed)
      : mask_(bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1),
        shift_(bits < 2 ? 1 : (bits + 1) / 2) {
    for (unsigned r = 0; r < rounds; ++r) {
      multipliers_[r] = mix64(seed + 2 * r + 1) | 1;
      keys_[r] = mix64(seed + 2 * r + 2) & mask_;
    }
  }
  constexpr std::uint64_t operator()(std::uint64_t x) const {
    for (unsigned r = 0; r < rounds; ++r) {
      x = (x * multipliers_[r]) & mask_;
      x ^= keys_[r];
      x ^= x >> shift_;
    }
    return x;
  }

 private:
  static constexpr unsigned rounds = 4;
  std::uint64_t mask_;
  unsigned shift_;
  std::array<std::uint64_t, rounds> multipliers_{};
  std::array<std::uint64_t, rounds> keys_{};
};

struct edge_endpoints {
  std::uint64_t source;
  std::uint64_t target;
};

/// Graph500 R-MAT edges with permuted vertex ids.
class kron_generator {
 public:
  kron_generator(unsigned scale, std::uint64_t seed)
      : scale_(scale), key_(mix64(seed ^ 0x6b726f6eULL)), permute_(scale, mix64(seed + 1)) {}

  edge_endpoints operator()(std::uint64_t edge) const {
    edge_random random(key_, edge);
    std::uint64_t u = 0;
    std::uint64_t v = 0;
    // One 64-bit word gives two levels (32 bits each; quadrant probabilities to 2^-32).
    for (unsigned level = 0; level < scale_; level += 2) {
      const std::uint64_t word = random.next();
      for (unsigned half = 0; half < 2 && level + half < scale_; ++half) {
        const auto p = static_cast<std::uint32_t>(word >> (32 * half));
        // Quadrant A (0,0), B (0,1), C (1,0), D (1,1) without branches: the quadrant is
        // random, so branches on it would mispredict about half the time.
        const std::uint64_t past_a = p >= a_end;
        const std::uint64_t past_b = p >= b_end;
        const std::uint64_t past_c = p >= c_end;
        u = (u << 1) | past_b;
        v = (v << 1) | (past_a ^ past_b ^ past_c);
      }
    }
    return {permute_(u), permute_(v)};
  }

 private:
  // Cumulative R-MAT probabilities A, A+B, A+B+C in units of 2^-32.
  static constexpr std::uint32_t a_end = 2448131359u;  // 0.57 * 2^32
  static constexpr std::uint32_t b_end = 3264175145u;  // 0.76 * 2^32
  static constexpr std::uint32_t c_end = 4080218931u;  // 0.95 * 2^32
  unsigned scale_;
  std::uint64_t key_;
  vertex_permutation permute_;
};

/// Both endpoints uniform over [0, 2^scale).
class urand_generator {
 public:
  urand_generator(unsigned scale, std::uint64_t seed)
      : shift_(64 - scale), key_(mix64(seed ^ 0x7572616eULL)) {}

  edge_endpoints operator()(std::uint64_t edge) const {
    edge_random random(key_, edge);
    const std::uint64_t u = random.next() >> shift_;  // top bits: the best mixed
    const std::uint64_t v = random.next() >> shift_;
    return {u, v};
  }

 private:
  unsigned shift_;
  std::uint64_t key_;
};

}  // namespace bam::graph
