// Computation DAGs for Perseus: the activity-on-node (AON) DAG of a pipeline
// schedule (synchronous 1F1B or GPipe, S stages x M microbatches) and its
// activity-on-arc (AOA) form that the min-cut solver works on. Plain values.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/optimizer/pipeline_frequency/planner/profile.h"

namespace zeus::pipeline_frequency {

enum class PipelineSchedule { k1F1B, kGPipe };

std::string_view schedule_name(PipelineSchedule schedule);  // "1f1b" / "gpipe"
PipelineSchedule parse_schedule(std::string_view text);     // kInvalidArgument if unknown

// One computation of the pipeline.
struct PipelineOp {
  int stage = 0;
  Instruction instruction = Instruction::kForward;
  int microbatch = 0;
};

// The AON DAG of one training iteration. Ops are numbered stage by stage in
// each stage's execution order; edges (u, v) mean v starts after u finishes.
struct PipelineDag {
  int num_stages = 0;
  int num_microbatches = 0;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  std::vector<PipelineOp> ops;
  std::vector<std::vector<int>> stage_order;  // op ids of each stage, in order
  std::vector<std::pair<int, int>> edges;

  // kInvalidArgument if stages < 1 or microbatches < 1.
  static PipelineDag build(int num_stages, int num_microbatches, PipelineSchedule schedule);
};

// Per-stage instruction order of a synchronous 1F1B schedule (DeepSpeed style):
// min(S-s, M) warm-up forwards, then alternating B/F, then the remaining B's.
std::vector<std::pair<Instruction, int>> one_f_one_b_order(int stage, int num_stages,
                                                           int num_microbatches);

// The AOA form of an AON DAG with `num_ops` ops. A dummy source (feeding every
// op without predecessors) and a dummy sink are added; each AON node n becomes
// nodes L(n) -> R(n) joined by an arc carrying n's op (or a dummy for the
// source/sink), and each AON edge becomes a dummy arc R(u) -> L(v). Nodes are
// numbered in topological order (source 0, sink last); arcs are sorted by tail.
struct AoaGraph {
  int num_nodes = 0;
  int source = 0;
  int sink = 0;
  std::vector<int> tail, head;
  std::vector<int> op;  // op id carried by each arc, or -1 for a dummy arc
  int num_arcs() const { return static_cast<int>(tail.size()); }

  // kInvalidArgument if an edge names an unknown op or the DAG has a cycle.
  static AoaGraph from_aon(int num_ops, const std::vector<std::pair<int, int>>& edges);
};

}  // namespace zeus::pipeline_frequency
