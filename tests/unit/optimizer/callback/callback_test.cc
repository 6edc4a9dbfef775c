#include "zeus/optimizer/callback/callback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zeus {
namespace {

class Recorder final : public callback::Callback {
 public:
  Recorder(std::string tag, std::vector<std::string>& log) : tag_(std::move(tag)), log_(log) {}
  void on_train_begin() override { log_.push_back(tag_ + ":train_begin"); }
  void on_train_end() override { log_.push_back(tag_ + ":train_end"); }
  void on_epoch_begin() override { log_.push_back(tag_ + ":epoch_begin"); }
  void on_epoch_end() override { log_.push_back(tag_ + ":epoch_end"); }
  void on_step_begin() override { log_.push_back(tag_ + ":step_begin"); }
  void on_step_end() override { log_.push_back(tag_ + ":step_end"); }
  void on_evaluate(double metric) override {
    log_.push_back(tag_ + ":evaluate " + std::to_string(static_cast<int>(metric)));
  }
  void on_instruction_begin(const std::string& n) override {
    log_.push_back(tag_ + ":ins_begin " + n);
  }
  void on_instruction_end(const std::string& n) override { log_.push_back(tag_ + ":ins_end " + n); }

 private:
  std::string tag_;
  std::vector<std::string>& log_;
};

TEST(CallbackSet, FansEveryHookOutInOrder) {
  std::vector<std::string> log;
  Recorder a("a", log), b("b", log);
  callback::CallbackSet set{a, b};
  set.on_train_begin();
  set.on_epoch_begin();
  set.on_step_begin();
  set.on_instruction_begin("fwd");
  set.on_instruction_end("fwd");
  set.on_step_end();
  set.on_evaluate(42.0);
  set.on_epoch_end();
  set.on_train_end();
  EXPECT_THAT(log, ::testing::ElementsAre("a:train_begin", "b:train_begin", "a:epoch_begin",
                                          "b:epoch_begin", "a:step_begin", "b:step_begin",
                                          "a:ins_begin fwd", "b:ins_begin fwd", "a:ins_end fwd",
                                          "b:ins_end fwd", "a:step_end", "b:step_end",
                                          "a:evaluate 42", "b:evaluate 42", "a:epoch_end",
                                          "b:epoch_end", "a:train_end", "b:train_end"));
}

TEST(CallbackSet, DefaultHooksDoNothingAndSetsNest) {
  std::vector<std::string> log;
  callback::Callback plain;  // every hook is a no-op
  Recorder r("r", log);
  callback::CallbackSet inner{r};
  callback::CallbackSet outer{plain, inner};
  outer.add(r);
  EXPECT_EQ(outer.size(), 3u);
  outer.on_step_begin();
  EXPECT_THAT(log, ::testing::ElementsAre("r:step_begin", "r:step_begin"));
}

}  // namespace
}  // namespace zeus
