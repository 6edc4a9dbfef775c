// Training-loop callbacks: the hooks a training loop calls so optimizers (the
// power-limit optimizer, or your own) can act at step and epoch boundaries
// without the loop knowing what they do.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace zeus::callback {

// Hooks a training loop calls, in this order per epoch:
//   on_train_begin; { on_epoch_begin; { on_step_begin; <step>; on_step_end }*;
//   on_evaluate(metric)?; on_epoch_end }*; on_train_end.
// on_instruction_begin/end bracket named pieces of work inside a step (for a
// pipeline-parallel frequency controller, which no optimizer here is yet). Every hook does nothing
// by default; override the ones you need. Thread-safety is up to the implementation; the loop calls
// hooks from one thread.
class Callback {
 public:
  virtual ~Callback() = default;

  virtual void on_train_begin() {}
  virtual void on_train_end() {}
  virtual void on_epoch_begin() {}
  virtual void on_epoch_end() {}
  virtual void on_step_begin() {}
  virtual void on_step_end() {}
  virtual void on_evaluate(double /*metric*/) {}
  virtual void on_instruction_begin(const std::string& /*name*/) {}
  virtual void on_instruction_end(const std::string& /*name*/) {}
};

// Fans every hook out to several callbacks, in the order they were added. It
// does not own them: each must outlive the set. Not thread-safe (like a loop).
class CallbackSet final : public Callback {
 public:
  CallbackSet() = default;
  CallbackSet(std::initializer_list<std::reference_wrapper<Callback>> callbacks);
  void add(Callback& callback);
  std::size_t size() const { return callbacks_.size(); }

  void on_train_begin() override;
  void on_train_end() override;
  void on_epoch_begin() override;
  void on_epoch_end() override;
  void on_step_begin() override;
  void on_step_end() override;
  void on_evaluate(double metric) override;
  void on_instruction_begin(const std::string& name) override;
  void on_instruction_end(const std::string& name) override;

 private:
  std::vector<Callback*> callbacks_;
};

}  // namespace zeus::callback
