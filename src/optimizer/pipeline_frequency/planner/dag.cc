#include "zeus/optimizer/pipeline_frequency/planner/dag.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

std::string_view schedule_name(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::k1F1B ? "1f1b" : "gpipe";
}

PipelineSchedule parse_schedule(std::string_view text) {
  if (text == "1f1b") return PipelineSchedule::k1F1B;
  if (text == "gpipe") return PipelineSchedule::kGPipe;
  throw_error(ErrorCode::kInvalidArgument,
              fmt::format("unknown schedule '{}': expected '1f1b' or 'gpipe'", text));
}

std::vector<std::pair<Instruction, int>> one_f_one_b_order(int stage, int num_stages,
                                                           int num_microbatches) {
  std::vector<std::pair<Instruction, int>> order;
  const int warmup = std::min(num_stages - stage, num_microbatches);
  for (int m = 0; m < warmup; ++m) order.emplace_back(Instruction::kForward, m);
  for (int m = 0; m < num_microbatches; ++m) {
    order.emplace_back(Instruction::kBackward, m);
    if (warmup + m < num_microbatches) order.emplace_back(Instruction::kForward, warmup + m);
  }
  return order;
}

PipelineDag PipelineDag::build(int num_stages, int num_microbatches, PipelineSchedule schedule) {
  if (num_stages < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("a pipeline needs >= 1 stage, got {}", num_stages));
  }
  if (num_microbatches < 1) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("a pipeline needs >= 1 microbatch, got {}", num_microbatches));
  }
  if (static_cast<long long>(num_stages) * num_microbatches > 50'000'000LL) {
    throw_error(ErrorCode::kInvalidArgument, "pipeline too large (stages x microbatches > 5e7)");
  }
  PipelineDag dag;
  dag.num_stages = num_stages;
  dag.num_microbatches = num_microbatches;
  dag.schedule = schedule;
  const auto S = static_cast<std::size_t>(num_stages);
  const auto M = static_cast<std::size_t>(num_microbatches);
  // id_of[(s * 2 + instr) * M + m]
  std::vector<int> id_of(S * 2 * M, -1);
  dag.stage_order.resize(S);
  for (int s = 0; s < num_stages; ++s) {
    std::vector<std::pair<Instruction, int>> order;
    if (schedule == PipelineSchedule::k1F1B) {
      order = one_f_one_b_order(s, num_stages, num_microbatches);
    } else {
      for (int m = 0; m < num_microbatches; ++m) order.emplace_back(Instruction::kForward, m);
      for (int m = num_microbatches - 1; m >= 0; --m) {
        order.emplace_back(Instruction::kBackward, m);
      }
    }
    for (const auto& [instr, m] : order) {
      const int id = static_cast<int>(dag.ops.size());
      dag.ops.push_back({s, instr, m});
      id_of[(static_cast<std::size_t>(s) * 2 + (instr == Instruction::kForward ? 0 : 1)) * M +
            static_cast<std::size_t>(m)] = id;
      auto& so = dag.stage_order[static_cast<std::size_t>(s)];
      if (!so.empty()) dag.edges.emplace_back(so.back(), id);
      so.push_back(id);
    }
  }
  auto fwd = [&](int s, int m) {
    return id_of[(static_cast<std::size_t>(s) * 2) * M + static_cast<std::size_t>(m)];
  };
  auto bwd = [&](int s, int m) {
    return id_of[(static_cast<std::size_t>(s) * 2 + 1) * M + static_cast<std::size_t>(m)];
  };
  for (int s = 0; s + 1 < num_stages; ++s) {
    for (int m = 0; m < num_microbatches; ++m) {
      dag.edges.emplace_back(fwd(s, m), fwd(s + 1, m));
      dag.edges.emplace_back(bwd(s + 1, m), bwd(s, m));
    }
  }
  return dag;
}

AoaGraph AoaGraph::from_aon(int num_ops, const std::vector<std::pair<int, int>>& edges) {
  if (num_ops < 0) throw_error(ErrorCode::kInvalidArgument, "negative op count");
  const int n = num_ops + 2;  // + dummy source (num_ops) and sink (num_ops + 1)
  const int src = num_ops, snk = num_ops + 1;
  std::vector<std::pair<int, int>> all;
  all.reserve(edges.size() + static_cast<std::size_t>(n));
  std::vector<int> indeg(static_cast<std::size_t>(n), 0), outdeg(static_cast<std::size_t>(n), 0);
  for (const auto& [u, v] : edges) {
    if (u < 0 || v < 0 || u >= num_ops || v >= num_ops) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("edge ({}, {}) names an op outside 0..{}", u, v, num_ops - 1));
    }
    all.emplace_back(u, v);
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (const auto& [u, v] : all) {
    ++outdeg[static_cast<std::size_t>(u)];
    ++indeg[static_cast<std::size_t>(v)];
  }
  for (int v = 0; v < num_ops; ++v) {
    if (indeg[static_cast<std::size_t>(v)] == 0) all.emplace_back(src, v);
    if (outdeg[static_cast<std::size_t>(v)] == 0) all.emplace_back(v, snk);
  }
  if (num_ops == 0) all.emplace_back(src, snk);
  // Kahn's algorithm; deterministic (smallest id first among ready nodes).
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(n));
  std::fill(indeg.begin(), indeg.end(), 0);
  for (const auto& [u, v] : all) {
    succ[static_cast<std::size_t>(u)].push_back(v);
    ++indeg[static_cast<std::size_t>(v)];
  }
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(n));
  std::vector<int> ready;
  for (int v = 0; v < n; ++v) {
    if (indeg[static_cast<std::size_t>(v)] == 0) ready.push_back(v);
  }
  // A FIFO keeps pipeline ops roughly in time order (good memory locality).
  for (std::size_t qi = 0; qi < ready.size(); ++qi) {
    const int u = ready[qi];
    order.push_back(u);
    for (int v : succ[static_cast<std::size_t>(u)]) {
      if (--indeg[static_cast<std::size_t>(v)] == 0) ready.push_back(v);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    throw_error(ErrorCode::kInvalidArgument, "the computation graph has a cycle");
  }
  std::vector<int> pos(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) pos[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = k;

  AoaGraph g;
  g.num_nodes = 2 * n;
  g.source = 2 * pos[static_cast<std::size_t>(src)];
  g.sink = 2 * pos[static_cast<std::size_t>(snk)] + 1;
  struct Arc {
    int tail, head, op;
  };
  std::vector<Arc> arcs;
  arcs.reserve(all.size() + static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) {
    const int k = pos[static_cast<std::size_t>(v)];
    arcs.push_back({2 * k, 2 * k + 1, v < num_ops ? v : -1});
  }
  for (const auto& [u, v] : all) {
    arcs.push_back(
        {2 * pos[static_cast<std::size_t>(u)] + 1, 2 * pos[static_cast<std::size_t>(v)], -1});
  }
  std::sort(arcs.begin(), arcs.end(), [](const Arc& a, const Arc& b) {
    return a.tail != b.tail ? a.tail < b.tail : a.head < b.head;
  });
  for (const auto& a : arcs) {
    g.tail.push_back(a.tail);
    g.head.push_back(a.head);
    g.op.push_back(a.op);
  }
  return g;
}

}  // namespace zeus::pipeline_frequency
