#include "seed/routes/gemm/gemm_route.h"

#include <algorithm>

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/routes/gemm/gemm_kernel.h"
#include "seed/routes/gemm/gemm_kernel_choice.h"
#include "seed/routes/gemm/folded_gemm_kernel.h"
#include "seed/routes/gemm/gemv_kernel.h"
#include "seed/routes/gemm/library_gemm.h"
#include "seed/routes/gemm/library_gemm_epilogue.h"

namespace cutegen::seed {

std::string_view gemm_mask_name(GemmMask mask) {
  switch (mask) {
    case GemmMask::none: return "";
    case GemmMask::triu: return "triu";
    case GemmMask::tril: return "tril";
  }
  return "";
}

std::string_view row_reduce_name(RowReduce reduce) {
  switch (reduce) {
    case RowReduce::none: return "";
    case RowReduce::sum: return "sum";
    case RowReduce::mean: return "mean";
    case RowReduce::max: return "max";
    case RowReduce::min: return "min";
    case RowReduce::logsumexp: return "logsumexp";
  }
  return "";
}

Status match_matmul(const OpGraph& g, const Node& mm, GemmPlan& plan, std::string_view dtype) {
  if (mm.op != Op::matmul || mm.args.size() != 2) {
    return Error{fmt::format("the output is {}, not a matrix product of inputs", mm.op)};
  }
  // Each operand: a forward input or parameter, or the transpose of its last two dimensions.
  struct Side {
    const Node* x = nullptr;
    bool transposed = false;
  };
  Side sides[2];
  for (int i = 0; i < 2; ++i) {
    Operand o = mm.args[static_cast<std::size_t>(i)];
    if (o.ref && g.node(*o.ref).op == Op::transpose) {
      const Node& t = g.node(*o.ref);
      const Node* src = t.args.empty() || !t.args[0].ref ? nullptr : &g.node(*t.args[0].ref);
      const std::size_t rank = src && src->type ? src->type->shape.size() : 0;
      auto d0 = dim_of(t, rank, "dim0"), d1 = dim_of(t, rank, "dim1");
      const auto last = static_cast<int64_t>(rank) - 1;
      if (rank < 2 || !d0 || !d1 || std::min(*d0, *d1) != last - 1 || std::max(*d0, *d1) != last) {
        return Error{"a transpose of other than the last two dimensions"};
      }
      sides[i].transposed = true;
      o = t.args[0];
    }
    if (auto why = plain_input(g, o, i == 0 ? "the left operand" : "the right operand", true, dtype); !why.empty())
      return Error{why};
    sides[i].x = &g.node(*o.ref);
  }
  auto a = sides[0].x->type->shape, b = sides[1].x->type->shape;
  if (sides[0].transposed) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (sides[1].transposed) std::swap(b[b.size() - 1], b[b.size() - 2]);
  if (a.size() < 2 || b.empty()) {
    return Error{"a matrix product with a vector on the left"};
  }
  if (b.size() == 1) b.push_back(1);  // matrix @ vector: a one-column matrix, the same memory
  plan.a_transposed = sides[0].transposed;
  plan.b_transposed = sides[1].transposed;
  const bool fp32_product = mm.type && mm.type->dtype == dtype && mm.type->contiguous;
  plan.matrices = sides[0].x->type->shape.size() == 2 && sides[1].x->type->shape.size() == 2 && fp32_product &&
                  mm.type->shape.size() == 2;
  plan.a_input = sides[0].x->index;
  plan.b_input = sides[1].x->index;
  plan.k = a.back();
  plan.n = b.back();
  if (b[b.size() - 2] != plan.k) {
    return Error{"the operands' inner dimensions differ"};
  }
  if (b.size() == 2) {
    if (a.size() > 2 && (plan.a_transposed || plan.mask != GemmMask::none)) {
      return Error{"a batched transposed or masked left operand times a matrix"};
    }
    plan.m = product(a, 0, a.size() - 1);  // (..., M, K) @ (K, N): the batch folds into M
    plan.folds_into_m = a.size() > 2 && sides[1].x->type->shape.size() == 2 && fp32_product;
  } else if (a.size() == b.size() && a.size() >= 3 && std::equal(a.begin(), a.end() - 2, b.begin())) {
    // (..., M, K) @ (..., K, N) with the same leading dimensions: contiguous operands are one run of matrices each,
    // which the tiled GEMM walks as one batch. The library kernel's batch is one leading dimension (its Matrix
    // view of (L, M, K)), so only a rank-3 product is `batched_matrices`.
    const std::size_t r = a.size();
    plan.batch = product(a, 0, r - 2);
    plan.m = a[r - 2];
    plan.batched_matrices = fp32_product && r == 3 && mm.type->shape.size() == 3;
    plan.a_batch_stride = a[r - 2] * a[r - 1];
    plan.b_batch_stride = b[r - 2] * b[r - 1];
  } else {
    return Error{"a broadcast batched matrix product (the seed has (..., M, K) @ (..., K, N) with the same leading "
                 "dimensions and (..., M, K) @ (K, N))"};
  }
  return ok_status();
}

namespace {

bool is_bf16_product(const Node& mm) { return mm.op == Op::matmul && mm.type && mm.type->dtype == "bfloat16"; }

// A bf16 product: the library's bf16 GEMM (library/gemm_sm90_bf16.cu: bf16 in and out, fp32 accumulation), the
// seed's one kernel for it -- every other GEMM kernel of the seed is fp32 -- in the layouts it was judged in on the
// H200 (A @ B and A @ B.T, benchmarks/results.md "GEMM") and at sizes its TMA rows take.
Result<GemmPlan> match_bf16_gemm(const OpGraph& g, const Node& mm, GemmPlan plan) {
  if (plan.mask != GemmMask::none)
    return Error{fmt::format("a bf16 product under {} (the bf16 GEMM has no mask)", gemm_mask_name(plan.mask))};
  if (auto s = match_matmul(g, mm, plan, "bfloat16"); !s) return s.error();
  if (!plan.matrices)
    return Error{"a bf16 product that is not two rank-2 matrices (the bf16 GEMM takes no batch or vector)"};
  if (plan.a_transposed)
    return Error{"a bf16 product with its left operand transposed (the bf16 GEMM is judged for A @ B and A @ B.T)"};
  if (plan.m % 8 != 0 || plan.n % 8 != 0 || plan.k % 8 != 0)
    return Error{fmt::format("a bf16 product of (M, N, K) = ({}, {}, {}) (the bf16 GEMM's TMA rows: multiples of 8)",
                             plan.m, plan.n, plan.k)};
  plan.bf16 = true;
  plan.kernel = GemmKernel::library;
  plan.library_precision = Precision::bf16;
  plan.kernel_reason = "bf16 operands: the library's bf16 GEMM (the seed's other GEMMs are fp32)";
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}

}  // namespace

Result<GemmPlan> match_gemm(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  GemmPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const Node* mm = out;
  if ((out->op == Op::triu || out->op == Op::tril) && out->args.size() == 1 && out->args[0].ref) {
    plan.mask = out->op == Op::triu ? GemmMask::triu : GemmMask::tril;
    const double* d = number(*out, "diagonal");
    plan.diagonal = d ? static_cast<int64_t>(*d) : 0;
    mm = &g.node(*out->args[0].ref);
  }
  if (is_bf16_product(*mm)) return match_bf16_gemm(g, *mm, std::move(plan));
  if (auto s = match_matmul(g, *mm, plan); !s) return s.error();
  plan.pattern = text_of(g, g.outputs[0]);
  choose_gemm_kernel(plan);
  return plan;
}

std::string gemm_description(const GemmPlan& plan) {
  switch (plan.kernel) {
    case GemmKernel::library:
      if (plan.norm != GemmNorm::none)
        return "matrix product with an epilogue and a norm (the library's 3xTF32 GEMM) y = " + plan.pattern;
      if (plan.reduce != RowReduce::none)
        return "matrix product with an epilogue and a row reduction (the library's 3xTF32 GEMM) y = " + plan.pattern;
      if (plan.has_epilogue() || !plan.columns.empty())
        return "matrix product with an epilogue (the library's 3xTF32 GEMM) y = " + plan.pattern;
      return fmt::format("matrix product (the library's {}) y = {}", library_gemm_name(plan).substr(8), plan.pattern);
    case GemmKernel::gemv: return "matrix-vector product (GEMV) y = " + plan.pattern;
    case GemmKernel::split_k: return fmt::format("matrix product (split K x {}) y = {}", plan.split_k, plan.pattern);
    case GemmKernel::folded:
      return fmt::format("row {} of an affine epilogue, folded through the product (a GEMV) y = {}",
                         row_reduce_name(plan.reduce), plan.pattern);
    case GemmKernel::skinny:
      if (plan.reduce != RowReduce::none)
        return "matrix product with an epilogue and a row reduction (the skinny 3xTF32 kernel) y = " + plan.pattern;
      if (plan.has_epilogue() || !plan.columns.empty())
        return "matrix product with an epilogue (the skinny 3xTF32 kernel) y = " + plan.pattern;
      return "matrix product (the skinny 3xTF32 kernel) y = " + plan.pattern;
    case GemmKernel::tiled: break;
  }
  if (!plan.has_epilogue()) return "matrix product y = " + plan.pattern;
  if (plan.norm != GemmNorm::none) return "matrix product with an epilogue and a norm y = " + plan.pattern;
  if (plan.reduce != RowReduce::none) return "matrix product with an epilogue and a row reduction y = " + plan.pattern;
  return "matrix product with an epilogue y = " + plan.pattern;
}

std::string gemm_pattern(const GemmPlan& plan) {
  switch (plan.kernel) {
    case GemmKernel::library: return std::string(library_gemm_name(plan)) + ": " + plan.pattern;
    case GemmKernel::gemv: return "GEMV: " + plan.pattern;
    case GemmKernel::split_k: return fmt::format("split-K x{} GEMM: {}", plan.split_k, plan.pattern);
    case GemmKernel::folded: return "folded GEMV: " + plan.pattern;
    case GemmKernel::skinny: return "skinny 3xTF32 GEMM: " + plan.pattern;
    case GemmKernel::tiled: break;
  }
  return plan.pattern;
}

Result<std::string> emit_gemm(const GemmPlan& plan, const CommentText& problem) {
  switch (plan.kernel) {
    case GemmKernel::library:
      if (plan.has_epilogue() || !plan.columns.empty() || plan.mask != GemmMask::none)
        return generate_library_gemm_epilogue_kernel(plan, problem);
      return generate_library_gemm_kernel(plan, problem);
    case GemmKernel::gemv: return generate_gemv_kernel(plan, problem);
    case GemmKernel::folded: return generate_folded_gemm_kernel(plan, problem);
    case GemmKernel::tiled:
    case GemmKernel::skinny:
    case GemmKernel::split_k: break;
  }
  return generate_gemm_kernel(plan, problem);
}

}  // namespace cutegen::seed
