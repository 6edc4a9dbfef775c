// The SVR forecaster over libsvm (optional: ZEUS_HAVE_LIBSVM).
#include <fmt/format.h>

#include <mutex>

#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"
#include "zeus/util/error.h"

#ifdef ZEUS_HAVE_LIBSVM
#include <libsvm/svm.h>
#endif

namespace zeus::carbon_aware {

#ifdef ZEUS_HAVE_LIBSVM

namespace {
void quiet(const char*) {}  // libsvm prints its optimizer's progress otherwise
}  // namespace

struct SvrForecaster::Model {
  // libsvm's model points into the training nodes: they live as long as it.
  std::vector<svm_node> nodes;
  std::vector<svm_node*> rows;
  std::vector<double> targets;
  svm_model* model = nullptr;
  ~Model() {
    if (model != nullptr) svm_free_and_destroy_model(&model);
  }
};

SvrForecaster::SvrForecaster() {
  static std::once_flag once;
  std::call_once(once, [] { svm_set_print_string_function(&quiet); });
}

SvrForecaster::~SvrForecaster() = default;

bool SvrForecaster::available() { return true; }

bool SvrForecaster::fitted() const { return model_ != nullptr && model_->model != nullptr; }

void SvrForecaster::fit_model(std::span<const double> h, std::int64_t first_utc,
                              std::int64_t step_s) {
  model_.reset();
  if (h.size() < 2 || static_cast<std::int64_t>(h.size() - 1) * step_s < 86'400 - step_s) return;
  auto m = std::make_unique<Model>();
  const std::size_t n = h.size() - 1;
  m->nodes.resize(n * 4);
  m->rows.resize(n);
  m->targets.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto f = forecast_features(first_utc + static_cast<std::int64_t>(i + 1) * step_s, h[i]);
    svm_node* row = &m->nodes[i * 4];
    for (int k = 0; k < 3; ++k) row[k] = svm_node{k + 1, f[static_cast<std::size_t>(k)]};
    row[3] = svm_node{-1, 0.0};
    m->rows[i] = row;
    m->targets[i] = h[i + 1];
  }
  svm_problem prob{};
  prob.l = static_cast<int>(n);
  prob.y = m->targets.data();
  prob.x = m->rows.data();
  svm_parameter p{};
  p.svm_type = EPSILON_SVR;
  p.kernel_type = RBF;
  p.gamma = 1e-4;
  p.C = 100.0;
  p.p = 0.1;     // epsilon of the insensitive tube
  p.eps = 1e-3;  // stopping tolerance
  p.shrinking = 1;
  p.probability = 0;
  p.cache_size = 4.0;  // MB; 48 points need far less
  if (const char* err = svm_check_parameter(&prob, &p)) {
    throw_error(ErrorCode::kInternal, fmt::format("libsvm rejected the SVR settings: {}", err));
  }
  m->model = svm_train(&prob, &p);
  model_ = std::move(m);
}

double SvrForecaster::predict(std::int64_t slot_utc, double previous) const {
  if (!fitted()) return previous;
  const auto f = forecast_features(slot_utc, previous);
  const svm_node x[4] = {{1, f[0]}, {2, f[1]}, {3, f[2]}, {-1, 0.0}};
  return svm_predict(model_->model, x);
}

#else  // no libsvm

struct SvrForecaster::Model {};

SvrForecaster::SvrForecaster() {
  throw_error(ErrorCode::kNotSupported,
              "the SVR forecaster needs libsvm, which this build lacks: install Debian's "
              "libsvm-dev (scripts/setup.sh) and rebuild, or use --forecaster linear/persistence");
}
SvrForecaster::~SvrForecaster() = default;
bool SvrForecaster::available() { return false; }
bool SvrForecaster::fitted() const { return false; }
void SvrForecaster::fit_model(std::span<const double>, std::int64_t, std::int64_t) {}
double SvrForecaster::predict(std::int64_t, double previous) const { return previous; }

#endif

}  // namespace zeus::carbon_aware
