#include "zeus/optimizer/callback/callback.h"

namespace zeus::callback {

CallbackSet::CallbackSet(std::initializer_list<std::reference_wrapper<Callback>> callbacks) {
  for (Callback& c : callbacks) add(c);
}

void CallbackSet::add(Callback& callback) { callbacks_.push_back(&callback); }

void CallbackSet::on_train_begin() {
  for (Callback* c : callbacks_) c->on_train_begin();
}
void CallbackSet::on_train_end() {
  for (Callback* c : callbacks_) c->on_train_end();
}
void CallbackSet::on_epoch_begin() {
  for (Callback* c : callbacks_) c->on_epoch_begin();
}
void CallbackSet::on_epoch_end() {
  for (Callback* c : callbacks_) c->on_epoch_end();
}
void CallbackSet::on_step_begin() {
  for (Callback* c : callbacks_) c->on_step_begin();
}
void CallbackSet::on_step_end() {
  for (Callback* c : callbacks_) c->on_step_end();
}
void CallbackSet::on_evaluate(double metric) {
  for (Callback* c : callbacks_) c->on_evaluate(metric);
}
void CallbackSet::on_instruction_begin(const std::string& name) {
  for (Callback* c : callbacks_) c->on_instruction_begin(name);
}
void CallbackSet::on_instruction_end(const std::string& name) {
  for (Callback* c : callbacks_) c->on_instruction_end(name);
}

}  // namespace zeus::callback
