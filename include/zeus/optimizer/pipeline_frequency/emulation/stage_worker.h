// One stage of an emulated pipeline (the process `zeus perseus emulate`
// starts per stage, or a thread in tests). It runs a real
// PipelineFrequencyOptimizer against the server over HTTP and real
// FrequencyController on a ProfiledGpu, and executes its stage's synchronous
// 1F1B instructions in emulated time: an activation or gradient from a
// neighbouring stage carries the sender's emulated finish time, and a
// computation starts at the later of that time and the stage's own clock
// (communication is instantaneous, as in the Perseus model). At the end of
// each iteration the driver's barrier (the optimizer step, and a straggler's
// wait) sets everyone's clock to the iteration's end.
#pragma once

namespace zeus::pipeline_frequency {

// Connected sockets: to the driver, and to the previous and next stage (-1
// for none).
struct StageChannels {
  int control = -1;
  int previous = -1;
  int next = -1;
};

// Reads its assignment from the driver, runs it and reports each iteration's
// measurements. Returns 0, or 1 after telling the driver what failed. Closes
// nothing.
int run_stage_worker(const StageChannels& channels);

}  // namespace zeus::pipeline_frequency
