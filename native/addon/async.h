// The one async job runner of the addon: runs a checked job (built on the JavaScript thread; see the Job concept
// below) in slices of rows from successive turns of the event loop and settles a promise. Each slice is a
// synchronous call from setImmediate: the JavaScript thread takes part in it with kgrank's pool and is inside the
// addon until the slice ends, so the caller's arrays cannot be detached, transferred or resized under native code
// (watch.h says why this replaces co-owning the memory, and what it costs). Before each slice every input is
// looked at again (InputWatch): a job whose input was given away stops there and resolves with incomplete output,
// which the facade, watching the same arrays, reports as KgrankDetachedError. Every JavaScript array the job reads
// or writes is held by a reference until the promise settles, so none can be collected meanwhile; `owner` (e.g. the
// FilterIndex whose index the job reads) is held the same way. Whatever the job indexes with is its own copy (the
// job types own them), so nothing the caller does between slices can move an index out of bounds. The first slice
// runs on the next turn, never inside the call that queued the job.
//
// Written on the plain Node-API C functions: when the environment is torn down (a Worker terminated while a job is
// pending) the next slice is simply never scheduled, nothing runs, the promise is never settled, and the job is
// freed by the finalizer of its external (the handle setImmediate passes to the step function). A slice runs inside a
// catch-all, so an exception (std::bad_alloc of a large input) becomes a rejection (code KGRANK_MEMORY), never an
// abort.
//
// Cancellation and progress: an async binding may take a job control (kernelControl(), below) after its record.
// The job then shares a kgrank::JobControl (native/core/thread_pool.h) with JavaScript: cancelKernel(control) sets
// its flag from the JavaScript thread, so it is seen before the next slice (a slice is a few ms: at least one row,
// about kSliceBytes of input); the promise then rejects with code KGRANK_CANCELLED. A job cancelled before its first
// slice does not run. kernelProgress(control) reads [done, total] rows at any time. The control is co-owned
// (std::shared_ptr) by its JavaScript handle and by every job given it, so cancelling or reading it before, during
// or after the job is always safe.
#pragma once
#include <napi.h>

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/thread_pool.h"
#include "args.h"
#include "common.h"
#include "watch.h"

namespace kgrank_addon {

using JobControlPtr = std::shared_ptr<kgrank::JobControl>;

// Marks the externals that hold a JobControlPtr, so no other external (or object) is ever taken for one.
inline const napi_type_tag* job_control_tag() {
  static const napi_type_tag tag = {0x6b6772616e6b4a6fULL, 0x62436f6e74726f6cULL};  // "kgrankJobControl"
  return &tag;
}

// The JobControlPtr held by `value`, or null when `value` is not a job control.
inline JobControlPtr* job_control_of(napi_env env, napi_value value) {
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external) return nullptr;
  bool tagged = false;
  if (napi_check_object_type_tag(env, value, job_control_tag(), &tagged) != napi_ok || !tagged) return nullptr;
  void* data = nullptr;
  if (napi_get_value_external(env, value, &data) != napi_ok) return nullptr;
  return static_cast<JobControlPtr*>(data);
}

// The job control passed as info[index], or null when that argument is absent or undefined; anything else is a
// TypeError.
inline JobControlPtr control_arg(const Napi::CallbackInfo& info, size_t index) {
  if (info.Length() <= index || info[index].IsUndefined()) return nullptr;
  JobControlPtr* p = job_control_of(info.Env(), info[index]);
  if (p == nullptr) throw_type(info.Env(), "the job control must come from kernelControl()");
  return *p;
}

// kernelControl() -> a new job control (an external; pass it to async bindings, cancelKernel and kernelProgress).
inline Napi::Value JobControlNew(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* held = new JobControlPtr(std::make_shared<kgrank::JobControl>());
  napi_value ext = nullptr;
  const auto finalize = [](napi_env, void* data, void*) { delete static_cast<JobControlPtr*>(data); };
  if (napi_create_external(env, held, finalize, nullptr, &ext) != napi_ok) {
    delete held;
    throw Napi::Error::New(env, "kernelControl: could not create the control");
  }
  NAPI_THROW_IF_FAILED(env, napi_type_tag_object(env, ext, job_control_tag()), Napi::Value());
  return Napi::Value(env, ext);
}

// cancelKernel(control): every job given this control stops at its next task boundary (or does not start).
inline Napi::Value CancelJob(const Napi::CallbackInfo& info) {
  const JobControlPtr c = control_arg(info, 0);
  if (!c) throw_type(info.Env(), "cancelKernel needs a kernel control");
  c->cancel();
  return info.Env().Undefined();
}

// kernelProgress(control) -> [done, total] in the driver's work units (both 0 until the job has started).
inline Napi::Value JobProgress(const Napi::CallbackInfo& info) {
  const JobControlPtr c = control_arg(info, 0);
  if (!c) throw_type(info.Env(), "kernelProgress needs a kernel control");
  Napi::Array out = Napi::Array::New(info.Env(), 2);
  out.Set(uint32_t{0}, Napi::Number::New(info.Env(), static_cast<double>(c->done())));
  out.Set(uint32_t{1}, Napi::Number::New(info.Env(), static_cast<double>(c->total())));
  return out;
}

// Input bytes (or, for the embedding job, multiply-adds) a slice works through before the event loop turns again
// (what that is in time: BENCHMARKS.md, "Notes moved from the kernel sources", async.h). Rows are independent in every
// job, so slicing never changes a result.
constexpr size_t kSliceBytes = size_t{64} << 20;

// The Job interface below for a job over `rows` rows of `cols` scores (float32 or float64, `type`) with a
// run_range(r0, r1, control): slices of about kSliceBytes of scores. The count and filtered-count jobs derive from it.
template <class Job>
struct ScoreRowSlices {
  void run() const { self().run_range(0, self().rows, nullptr); }
  size_t total_rows() const { return self().rows; }
  size_t slice_rows() const {
    const size_t row_bytes = self().cols * (self().type == napi_float32_array ? sizeof(float) : sizeof(double));
    return std::max<size_t>(1, kSliceBytes / std::max<size_t>(1, row_bytes));
  }
  bool run_rows(size_t r0, size_t r1) const {
    self().run_range(r0, r1, nullptr);
    return true;
  }

 private:
  const Job& self() const { return static_cast<const Job&>(*this); }
};

// A Job: total_rows() rows, worked through as run_rows(r0, r1) over consecutive ranges of slice_rows() rows (at least
// 1); run_rows returns false to stop early (the job wrote why into its output, e.g. a status slot), true to go on. It
// may throw std::bad_alloc and other std::exceptions.
class JobSlices {
 public:
  virtual ~JobSlices() = default;
  // One slice, on the JavaScript thread; schedules the next or settles. Throws nothing.
  virtual void advance(napi_env env) noexcept = 0;
};

// The one step function of an environment (made once, in init_async, and kept as the addon's instance data):
// setImmediate(step, job) calls it with the job's external. Making a function per call would be one more call that
// fails while a Worker is being terminated, and an error made then can hang V8 (seen under Node 24).
inline napi_value async_step(napi_env env, napi_callback_info cbinfo) {
  size_t argc = 1;
  napi_value job = nullptr;
  void* data = nullptr;
  if (napi_get_cb_info(env, cbinfo, &argc, &job, nullptr, nullptr) != napi_ok || argc < 1) return nullptr;
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, job, &type) != napi_ok || type != napi_external) return nullptr;
  if (napi_get_value_external(env, job, &data) != napi_ok || data == nullptr) return nullptr;
  static_cast<JobSlices*>(data)->advance(env);
  return nullptr;
}

// Makes this environment's step function; called once from the addon's Init.
inline void init_async(Napi::Env env) {
  napi_value step = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env,
                            napi_create_function(env, "kgrankJobStep", NAPI_AUTO_LENGTH, &async_step, nullptr, &step));
  auto* ref = new napi_ref(nullptr);
  if (napi_create_reference(env, step, 1, ref) != napi_ok) {
    delete ref;
    throw Napi::Error::New(env, "kgrank: could not keep the async step function");
  }
  // The reference itself goes with the environment; the finalizer frees only its holder.
  const auto finalize = [](napi_env, void* data, void*) { delete static_cast<napi_ref*>(data); };
  NAPI_THROW_IF_FAILED_VOID(env, napi_set_instance_data(env, ref, finalize, nullptr));
}

template <class Job>
class JobWork final : public JobSlices {
 public:
  // Queues `job` over the typed arrays `arrays` (its record's, args.h) and returns its promise. Throws
  // (Napi::Error) only before anything is queued; returns an empty value, making no error, when the environment is
  // being torn down (every call that could fail then fails).
  static Napi::Value queue(Napi::Env env, const char* name, Job&& job, const std::vector<ReadArray>& arrays,
                           Napi::Value owner, JobControlPtr control) {
    Napi::Object keep = Napi::Object::New(env);
    if (!owner.IsEmpty() && !owner.IsUndefined()) keep.Set("owner", owner);
    std::unique_ptr<JobWork> self(new JobWork(std::move(job), name, std::move(control)));
    for (size_t k = 0; k < arrays.size(); ++k) {
      keep.Set(static_cast<uint32_t>(k), Napi::Value(env, arrays[k].value));
      self->watch_.add(env, arrays[k].value, k);
    }
    // From here the external owns the job: its finalizer frees it once the promise settled (the reference to it
    // is gone), or when the environment goes away with the job pending.
    napi_value external = nullptr;
    const auto finalize = [](napi_env, void* data, void*) { delete static_cast<JobSlices*>(data); };
    if (napi_create_external(env, self.get(), finalize, nullptr, &external) != napi_ok) return Napi::Value();
    JobWork* work = self.release();
    keep.Set("job", Napi::Value(env, external));
    napi_value promise = nullptr;
    if (napi_create_reference(env, keep, 1, &work->keep_) != napi_ok) return Napi::Value();
    if (napi_create_promise(env, &work->deferred_, &promise) != napi_ok) {
      napi_delete_reference(env, work->keep_);
      work->keep_ = nullptr;
      return Napi::Value();
    }
    if (work->control_) work->control_->add_total(work->job_->total_rows());
    if (!work->schedule(env)) {
      work->failed_ = true;
      work->error_ = std::string(name) + ": could not schedule the job (setImmediate is not callable)";
      work->settle(env);
    }
    return Napi::Value(env, promise);
  }

 private:
  JobWork(Job&& job, const char* name, JobControlPtr control)
      : job_(new Job(std::move(job))), name_(name), control_(std::move(control)) {}

  // Asks the event loop to call the step function with this job on its next turn (setImmediate, as the fallback's
  // slices do).
  bool schedule(napi_env env) noexcept {
    napi_value global = nullptr, set_immediate = nullptr, keep = nullptr, ignored = nullptr;
    napi_value args[2] = {nullptr, nullptr};
    void* data = nullptr;
    napi_valuetype type = napi_undefined;
    if (napi_get_instance_data(env, &data) != napi_ok || data == nullptr) return false;
    if (napi_get_reference_value(env, *static_cast<napi_ref*>(data), &args[0]) != napi_ok || args[0] == nullptr) {
      return false;
    }
    if (napi_get_global(env, &global) != napi_ok) return false;
    if (napi_get_named_property(env, global, "setImmediate", &set_immediate) != napi_ok) return false;
    if (napi_typeof(env, set_immediate, &type) != napi_ok || type != napi_function) return false;
    if (napi_get_reference_value(env, keep_, &keep) != napi_ok || keep == nullptr) return false;
    if (napi_get_named_property(env, keep, "job", &args[1]) != napi_ok) return false;
    return napi_call_function(env, global, set_immediate, 2, args, &ignored) == napi_ok;
  }

  void advance(napi_env env) noexcept override {
    if (settled_) return;
    napi_handle_scope scope = nullptr;
    const bool scoped = napi_open_handle_scope(env, &scope) == napi_ok;
    const size_t rows = job_->total_rows();
    bool go_on = next_ < rows;
    if (control_ && control_->cancelled()) {
      failed_ = cancelled_ = true;
      go_on = false;
    } else if (go_on) {
      napi_value keep = nullptr;
      const InputWatch::State state =
          napi_get_reference_value(env, keep_, &keep) == napi_ok && keep != nullptr
              ? watch_.check(env,
                             [&](size_t k) {
                               napi_value v = nullptr;
                               return napi_get_element(env, keep, static_cast<uint32_t>(k), &v) == napi_ok ? v
                                                                                                           : nullptr;
                             })
              : InputWatch::State::Moved;
      if (state == InputWatch::State::Shrunk) {
        go_on = false;  // given away: resolve; the facade's watch reports it
      } else if (state == InputWatch::State::Moved) {
        failed_ = true;
        go_on = false;
        error_ = std::string(name_) + ": an input moved in memory during the call";
      }
    }
    if (go_on) {
      const size_t r1 = std::min(rows, next_ + std::max<size_t>(1, job_->slice_rows()));
      try {
        go_on = job_->run_rows(next_, r1);
      } catch (const std::bad_alloc&) {
        failed_ = memory_ = true;
      } catch (const std::length_error&) {
        failed_ = memory_ = true;
      } catch (const std::exception& e) {
        failed_ = true;
        try {
          error_ = std::string(name_) + ": " + e.what();
        } catch (...) {
        }
      } catch (...) {
        failed_ = true;
      }
      if (control_) control_->advance(r1 - next_);
      next_ = r1;
      if (failed_ || next_ >= rows) go_on = false;
    }
    if (go_on && !schedule(env)) {
      failed_ = true;
      error_ = std::string(name_) + ": could not schedule the next slice";
      go_on = false;
    }
    if (!go_on) settle(env);
    if (scoped) napi_close_handle_scope(env, scope);
  }

  void settle(napi_env env) noexcept {
    settled_ = true;
    if (!failed_) {
      napi_value undefined = nullptr;
      if (napi_get_undefined(env, &undefined) == napi_ok) napi_resolve_deferred(env, deferred_, undefined);
    } else {
      napi_value error = nullptr;
      try {
        if (memory_) error_ = memory_message(name_);
        if (cancelled_) error_ = std::string(name_) + ": cancelled";
        if (error_.empty()) error_ = std::string(name_) + ": the native job failed";
        error = make_error(env, error_, cancelled_ ? "KGRANK_CANCELLED" : memory_ ? "KGRANK_MEMORY" : "KGRANK_NATIVE");
      } catch (...) {
        error = nullptr;
      }
      if (error != nullptr) napi_reject_deferred(env, deferred_, error);
    }
    // Let go of the arrays, the owner and the job's external (whose finalizer then frees this), and of the job's
    // own buffers now.
    if (keep_ != nullptr) napi_delete_reference(env, keep_);
    keep_ = nullptr;
    job_.reset();
    control_.reset();
  }

  std::unique_ptr<Job> job_;
  const char* name_;
  JobControlPtr control_;
  InputWatch watch_;
  napi_ref keep_ = nullptr;
  napi_deferred deferred_ = nullptr;
  size_t next_ = 0;
  std::string error_;
  bool settled_ = false;
  bool failed_ = false;
  bool memory_ = false;
  bool cancelled_ = false;
};

// Queues `job` (already checked, read from `args`) over the typed arrays its record yielded and returns its promise;
// info[control_index] is where a job control may be passed. Views of resizable ArrayBuffers are refused: the facade
// passes copies of them, so only a direct caller of the addon gets here, and a refusal is clearer than a job that
// stops when one shrinks.
template <class Job>
Napi::Value queue_job(const Napi::CallbackInfo& info, const Args& args, Job job, size_t control_index,
                      Napi::Value owner = Napi::Value()) {
  JobControlPtr control = control_arg(info, control_index);
  for (const ReadArray& a : args.arrays()) {
    if (InputWatch::resizable(info.Env(), a.value)) {
      args.type_error(a.field.c_str(),
                      "is a view of a resizable ArrayBuffer, which an async job does not take "
                      "(resize() could shrink it between slices): pass a copy");
    }
  }
  return JobWork<Job>::queue(info.Env(), args.call(), std::move(job), args.arrays(), owner, std::move(control));
}

}  // namespace kgrank_addon
