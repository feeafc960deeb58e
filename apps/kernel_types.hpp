#pragma once
/// @file
/// Every kernel functor type the app drivers launch, per neighbour view type. A GPU executor
/// loads each once before persistent controllers start (DESIGN section 11: a kernel's first
/// launch beside a running controller can deadlock); tests check they are trivially copyable.

#include <cstdint>
#include <tuple>
#include <type_traits>

#include <bam/array_ref.hpp>

#include "apps/bfs_kernels.hpp"
#include "apps/cc_kernels.hpp"
#include "apps/edges.hpp"
#include "apps/kernel_support.hpp"
#include "apps/pagerank_kernels.hpp"
#include "apps/tiled_edges.hpp"

namespace bam::apps {

template <class View>
using app_kernel_types =
    std::tuple<fill_kernel<std::int32_t>, fill_kernel<std::uint32_t>, fill_kernel<std::uint64_t>,
               fill_kernel<double>, bfs_expand_kernel<View>, bfs_scan_kernel<View>,
               bfs_pieces_kernel<View>, bfs_bottom_up_kernel<View>, bfs_unit_starts_kernel,
               bfs_hub_probe_kernel, cc_init_kernel, cc_hook_kernel<View>, cc_sample_kernel<View>,
               cc_unit_first_kernel, cc_gather_roots_kernel, cc_mark_giant_kernel,
               cc_finish_kernel<View>, cc_compress_kernel, pagerank_prepare_kernel,
               pagerank_push_kernel<View>, pagerank_pull_kernel<View>, pagerank_apply_kernel>;

namespace detail {
template <class Tuple>
struct all_trivially_copyable;
template <class... K>
struct all_trivially_copyable<std::tuple<K...>>
    : std::bool_constant<(std::is_trivially_copyable_v<K> && ...)> {};
}  // namespace detail

// Kernels are passed to launches by value: raw pointers and refs only.
static_assert(
    detail::all_trivially_copyable<app_kernel_types<array_ref<const std::uint64_t>>>::value);
static_assert(
    detail::all_trivially_copyable<app_kernel_types<array_ref<const std::uint32_t>>>::value);
static_assert(detail::all_trivially_copyable<app_kernel_types<window_ref<std::uint64_t>>>::value);
static_assert(detail::all_trivially_copyable<app_kernel_types<window_ref<std::uint32_t>>>::value);

}  // namespace bam::apps
