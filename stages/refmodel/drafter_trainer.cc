#include "stages/refmodel/drafter_trainer.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "stages/refmodel/sampling.h"

namespace longhaul::refmodel {
namespace {

constexpr double kBeta1 = 0.9;
constexpr double kBeta2 = 0.999;
constexpr double kEps = 1e-8;
const char* const kParamNames[] = {"fc.weight",  "fc.bias",        "layer.weight",
                                   "layer.bias", "lm_head.weight", "lm_head.bias"};

// dst += s * x
inline void Axpy(float s, const float* x, int n, float* dst) {
#pragma omp simd
  for (int i = 0; i < n; ++i) dst[i] += s * x[i];
}

void SoftmaxInPlace(std::vector<float>& v) {
  float mx = *std::max_element(v.begin(), v.end());
  double total = 0;
  for (float& x : v) {
    x = std::exp(x - mx);
    total += x;
  }
  float inv = static_cast<float>(1.0 / total);
  for (float& x : v) x *= inv;
}

}  // namespace

struct DrafterTrainer::Grads {
  DrafterWeights w;
  explicit Grads(const DrafterWeights& like) {
    w.fc_w.assign(like.fc_w.size(), 0);
    w.fc_b.assign(like.fc_b.size(), 0);
    w.in_w.assign(like.in_w.size(), 0);
    w.in_b.assign(like.in_b.size(), 0);
    w.head_w.assign(like.head_w.size(), 0);
    w.head_b.assign(like.head_b.size(), 0);
  }
  void Zero() {
    for (auto* v : {&w.fc_w, &w.fc_b, &w.in_w, &w.in_b, &w.head_w, &w.head_b}) {
      std::fill(v->begin(), v->end(), 0.0f);
    }
  }
  std::vector<const std::vector<float>*> All() const {
    return {&w.fc_w, &w.fc_b, &w.in_w, &w.in_b, &w.head_w, &w.head_b};
  }
};

DrafterTrainer::DrafterTrainer(Drafter* drafter, const std::vector<StateSequence>* data,
                               TrainerOptions options)
    : drafter_(drafter), data_(data), opt_(options) {
  for (uint32_t s = 0; s < data_->size(); ++s) {
    const StateSequence& seq = (*data_)[s];
    for (uint32_t t = 0; t + 2 < seq.input_ids.size(); ++t) {
      if (seq.loss_mask[t + 2]) positions_.push_back({s, t});
    }
  }
  for (std::vector<float>* p : Params()) {
    m_.emplace_back(p->size(), 0.0f);
    v_.emplace_back(p->size(), 0.0f);
  }
}

std::vector<std::vector<float>*> DrafterTrainer::Params() {
  DrafterWeights& w = drafter_->mutable_weights();
  return {&w.fc_w, &w.fc_b, &w.in_w, &w.in_b, &w.head_w, &w.head_b};
}

double DrafterTrainer::Accumulate(const Position& pos, Grads* g, double* weight) const {
  const DrafterWeights& w = drafter_->weights();
  const StateSequence& seq = (*data_)[pos.seq];
  const int D = drafter_->hidden_size(), H = drafter_->target_hidden_size();
  const int N = drafter_->draft_vocab_size(), A = 3 * H;
  const size_t L = seq.input_ids.size();
  const int steps = std::min<int>(opt_.ttt_steps, static_cast<int>(L - 2 - pos.t));
  const float* aux_t = seq.aux_hidden_state.data() + static_cast<size_t>(pos.t) * A;

  // Forward, keeping what the backward pass needs.
  std::vector<float> g0(D);
  MatVec(w.fc_w.data(), w.fc_b.data(), aux_t, D, A, g0.data());
  std::vector<std::vector<float>> u(steps, std::vector<float>(D + H));
  std::vector<std::vector<float>> a(steps, std::vector<float>(D));
  std::vector<std::vector<float>> p(steps);
  std::vector<int32_t> label(steps, -1);
  std::vector<double> step_weight(steps, 0.0);
  double loss = 0;
  const float* h = g0.data();
  double decay = 1.0;
  for (int j = 0; j < steps; ++j, decay *= opt_.step_decay) {
    // Low layer of aux(t + j + 1) is the target's embedding of x_{t+j+1}.
    const float* e = seq.aux_hidden_state.data() + (pos.t + j + 1) * static_cast<size_t>(A);
    std::copy(h, h + D, u[j].begin());
    std::copy(e, e + H, u[j].begin() + D);
    for (int r = 0; r < D; ++r) {
      a[j][r] = std::tanh(
          w.in_b[r] + Dot(w.in_w.data() + static_cast<size_t>(r) * (D + H), u[j].data(), D + H));
    }
    h = a[j].data();
    size_t y_pos = pos.t + j + 2;
    int32_t y = seq.input_ids[y_pos];
    int32_t d = drafter_->vocab().target_to_draft[y];
    if (!seq.loss_mask[y_pos] || d < 0) continue;
    p[j].resize(N);
    MatVec(w.head_w.data(), w.head_b.data(), a[j].data(), N, D, p[j].data());
    SoftmaxInPlace(p[j]);
    label[j] = d;
    step_weight[j] = decay;
    loss += decay * -std::log(std::max(p[j][d], 1e-30f));
    *weight += decay;
  }

  // Backward through the unrolled steps.
  std::vector<float> dh(D, 0.0f), da(D), dz(D), du(D + H);
  for (int j = steps - 1; j >= 0; --j) {
    std::copy(dh.begin(), dh.end(), da.begin());
    if (label[j] >= 0) {
      std::vector<float>& dl = p[j];  // becomes weight * (p - onehot)
      dl[label[j]] -= 1.0f;
      const float sw = static_cast<float>(step_weight[j]);
      for (float& x : dl) x *= sw;
      for (int n = 0; n < N; ++n) {
        const float dln = dl[n];
        g->w.head_b[n] += dln;
        Axpy(dln, a[j].data(), D, g->w.head_w.data() + static_cast<size_t>(n) * D);
        Axpy(dln, w.head_w.data() + static_cast<size_t>(n) * D, D, da.data());
      }
    }
    for (int r = 0; r < D; ++r) dz[r] = da[r] * (1.0f - a[j][r] * a[j][r]);
    std::fill(du.begin(), du.end(), 0.0f);
    for (int r = 0; r < D; ++r) {
      g->w.in_b[r] += dz[r];
      Axpy(dz[r], u[j].data(), D + H, g->w.in_w.data() + static_cast<size_t>(r) * (D + H));
      Axpy(dz[r], w.in_w.data() + static_cast<size_t>(r) * (D + H), D + H, du.data());
    }
    std::copy(du.begin(), du.begin() + D, dh.begin());
  }
  for (int r = 0; r < D; ++r) {
    g->w.fc_b[r] += dh[r];
    Axpy(dh[r], aux_t, A, g->w.fc_w.data() + static_cast<size_t>(r) * A);
  }
  return loss;
}

void DrafterTrainer::AdamUpdate(const Grads& g, double scale) {
  ++global_step_;
  const double lr = opt_.learning_rate;
  const double bc1 = 1.0 - std::pow(kBeta1, static_cast<double>(global_step_));
  const double bc2 = 1.0 - std::pow(kBeta2, static_cast<double>(global_step_));
  std::vector<std::vector<float>*> params = Params();
  std::vector<const std::vector<float>*> grads = g.All();
  for (size_t k = 0; k < params.size(); ++k) {
    std::vector<float>& p = *params[k];
    const std::vector<float>& gr = *grads[k];
    std::vector<float>& m = m_[k];
    std::vector<float>& v = v_[k];
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = gr[i] * scale;
      m[i] = static_cast<float>(kBeta1 * m[i] + (1 - kBeta1) * gi);
      v[i] = static_cast<float>(kBeta2 * v[i] + (1 - kBeta2) * gi * gi);
      p[i] -= static_cast<float>(lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + kEps));
    }
  }
}

EpochReport DrafterTrainer::RunEpoch(int epoch,
                                     const std::function<void(int64_t, double)>& on_step) {
  std::vector<Position> order = positions_;
  Rng rng(opt_.seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(epoch));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);

  EpochReport report;
  report.epoch = epoch;
  Grads g(drafter_->weights());
  double loss_sum = 0, weight_sum = 0;
  const size_t batch = std::max(1, opt_.batch_size);
  for (size_t start = 0; start < order.size(); start += batch) {
    g.Zero();
    double batch_loss = 0, batch_weight = 0;
    size_t end = std::min(order.size(), start + batch);
    for (size_t i = start; i < end; ++i) batch_loss += Accumulate(order[i], &g, &batch_weight);
    report.examples += static_cast<int64_t>(end - start);
    if (batch_weight <= 0) continue;  // nothing in this batch is predictable
    AdamUpdate(g, 1.0 / batch_weight);
    ++report.steps;
    loss_sum += batch_loss;
    weight_sum += batch_weight;
    if (on_step) on_step(global_step_, batch_loss / batch_weight);
  }
  report.mean_loss = weight_sum > 0 ? loss_sum / weight_sum : 0;
  return report;
}

EvalReport DrafterTrainer::Evaluate() const {
  const DrafterWeights& w = drafter_->weights();
  const int D = drafter_->hidden_size(), H = drafter_->target_hidden_size();
  const int N = drafter_->draft_vocab_size(), A = 3 * H;
  std::vector<float> g(D), a(D), logits(N);
  EvalReport r;
  double loss = 0;
  int64_t in_vocab = 0, hits = 0;
  for (const Position& pos : positions_) {
    const StateSequence& seq = (*data_)[pos.seq];
    const float* aux_t = seq.aux_hidden_state.data() + static_cast<size_t>(pos.t) * A;
    MatVec(w.fc_w.data(), w.fc_b.data(), aux_t, D, A, g.data());
    drafter_->Step(g.data(), aux_t + A, a.data(), logits.data());  // low layer of aux(t+1)
    int32_t y = seq.input_ids[pos.t + 2];
    int32_t best = drafter_->ToTarget(Argmax(logits));
    hits += best == y;
    int32_t d = drafter_->vocab().target_to_draft[y];
    if (d >= 0) {
      SoftmaxInPlace(logits);
      loss += -std::log(std::max(logits[d], 1e-30f));
      ++in_vocab;
    }
  }
  r.positions = static_cast<int64_t>(positions_.size());
  r.loss = in_vocab ? loss / in_vocab : 0;
  r.top1 = r.positions ? double(hits) / r.positions : 0;
  return r;
}

TensorMap DrafterTrainer::OptimizerState() const {
  TensorMap state;
  for (size_t k = 0; k < m_.size(); ++k) {
    state[StrCat("adam.m.", kParamNames[k])] = Tensor::F32({m_[k].size()}, m_[k]);
    state[StrCat("adam.v.", kParamNames[k])] = Tensor::F32({v_[k].size()}, v_[k]);
  }
  state["global_step"] = Tensor::I64({1}, {global_step_});
  return state;
}

Status DrafterTrainer::RestoreOptimizerState(const TensorMap& state, const std::string& file) {
  for (size_t k = 0; k < m_.size(); ++k) {
    using Slot = std::pair<const char*, std::vector<float>*>;
    for (auto [prefix, dst] : {Slot{"adam.m.", &m_[k]}, Slot{"adam.v.", &v_[k]}}) {
      ASSIGN_OR_RETURN(const Tensor* t, GetTensor(state, file, StrCat(prefix, kParamNames[k]),
                                                  DType::kFloat32, {dst->size()}));
      *dst = t->f32;
    }
  }
  ASSIGN_OR_RETURN(const Tensor* step, GetTensor(state, file, "global_step", DType::kInt64, {1}));
  global_step_ = step->i64[0];
  return OkStatus();
}

}  // namespace longhaul::refmodel
