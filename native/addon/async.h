// The one async job runner of the addon: runs a checked job (any type with `void run(kgrank::JobControl*)`, built on
// the JavaScript thread) on a libuv worker thread, which fans out to kgrank's own pool, and settles a promise. Every JavaScript array
// the job reads or writes is held by a reference until the promise settles, so none can be collected meanwhile, and
// its buffer is pinned (pin.h), so none can be detached and freed meanwhile; `owner` (e.g. the FilterIndex whose
// index the job reads) is held the same way. Whatever the job indexes with is its own copy (the job types own them),
// so nothing the caller does after the call returns can move an index out of bounds.
//
// Written on the plain Node-API C functions, not Napi::AsyncWorker: when the environment is being torn down (a
// Worker terminated while a job runs) Node drains the job and still calls the completion callback, where every call
// into JavaScript fails. Napi::AsyncWorker turned that failure into a C++ exception thrown out of the callback, which
// aborted the whole process ("terminate called after throwing an instance of 'Napi::Error'"). Here the completion
// callback throws nothing and ignores the statuses of the calls that settle the promise: in a dying environment the
// promise is simply never settled, and every resource is still released. The job itself runs inside a catch-all, so
// an exception (std::bad_alloc of a large input) becomes a rejection (code KGRANK_MEMORY), never an abort.
//
// Cancellation and progress: an async binding may take a job control (kernelControl(), below) as its last argument. The
// job then shares a kgrank::JobControl (native/core/thread_pool.h) with JavaScript: cancelKernel(control) sets its flag
// from the JavaScript thread, and the core's parallel loops stop at the next task boundary (kgrank::Cancelled); the
// promise then rejects with code KGRANK_CANCELLED, after the job's memory was released. A job cancelled before it
// started does not run. kernelProgress(control) reads [done, total] work units at any time without waiting for
// anything. The control is co-owned (std::shared_ptr) by its JavaScript handle and by every job given it, so
// cancelling or reading it before, during or after the job is always safe.
#pragma once
#include <napi.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "../core/thread_pool.h"
#include "common.h"
#include "pin.h"

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

template <class Job>
class JobWork {
 public:
  // Queues `job` over the arrays info[0 .. arrays) and returns its promise; throws (Napi::Error) only before
  // anything is queued.
  static Napi::Value queue(const Napi::CallbackInfo& info, const char* name, Job&& job, size_t arrays,
                           Napi::Value owner, JobControlPtr control) {
    Napi::Env env = info.Env();
    std::unique_ptr<JobWork> self(new JobWork(std::move(job), name));
    self->control_ = std::move(control);
    Napi::Object keep = Napi::Object::New(env);
    if (!owner.IsEmpty() && !owner.IsUndefined()) keep.Set("owner", owner);
    for (size_t k = 0; k < arrays; ++k) {
      keep.Set(static_cast<uint32_t>(k), info[k]);
      self->pins_.add(env, info[k]);
    }
    napi_value promise = nullptr;
    NAPI_THROW_IF_FAILED(env, napi_create_reference(env, keep, 1, &self->keep_), Napi::Value());
    if (napi_create_promise(env, &self->deferred_, &promise) != napi_ok) {
      self->release(env);
      throw Napi::Error::New(env, "kgrank: could not create a promise");
    }
    napi_value resource_name = Napi::String::New(env, name);
    if (napi_create_async_work(env, nullptr, resource_name, &JobWork::execute, &JobWork::complete, self.get(),
                               &self->work_) != napi_ok ||
        napi_queue_async_work(env, self->work_) != napi_ok) {
      // Nothing runs: reject now (the promise exists), release everything.
      self->failed_ = true;
      self->error_ = std::string(name) + ": could not queue the job";
      self->settle(env);
      return Napi::Value(env, promise);
    }
    self.release();  // owned by libuv until complete()
    return Napi::Value(env, promise);
  }

 private:
  JobWork(Job&& job, const char* name) : job_(std::move(job)), name_(name) {}

  // Worker thread: no Node-API calls. Exceptions stop here.
  static void execute(napi_env, void* data) {
    auto* self = static_cast<JobWork*>(data);
    kgrank::JobControl* control = self->control_.get();
    if (control != nullptr && control->cancelled()) {  // cancelled while queued: nothing to do
      self->failed_ = self->cancelled_ = true;
      return;
    }
    try {
      self->job_.run(control);
    } catch (const kgrank::Cancelled&) {
      self->failed_ = self->cancelled_ = true;
    } catch (const std::bad_alloc&) {
      self->failed_ = self->memory_ = true;
    } catch (const std::length_error&) {
      self->failed_ = self->memory_ = true;
    } catch (const std::exception& e) {
      self->failed_ = true;
      try {
        self->error_ = std::string(self->name_) + ": " + e.what();
      } catch (...) {
      }
    } catch (...) {
      self->failed_ = true;
    }
  }

  // JavaScript thread, also while the environment is torn down (then every call below fails; none may throw).
  static void complete(napi_env env, napi_status status, void* data) {
    std::unique_ptr<JobWork> self(static_cast<JobWork*>(data));
    if (status != napi_ok) self->failed_ = true;
    self->settle(env);
  }

  void settle(napi_env env) noexcept {
    napi_handle_scope scope = nullptr;
    const bool scoped = napi_open_handle_scope(env, &scope) == napi_ok;
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
    release(env);
    if (scoped) napi_close_handle_scope(env, scope);
  }

  void release(napi_env env) noexcept {
    pins_.release();
    if (keep_ != nullptr) napi_delete_reference(env, keep_);
    keep_ = nullptr;
    if (work_ != nullptr) napi_delete_async_work(env, work_);
    work_ = nullptr;
    control_.reset();
  }

  Job job_;
  const char* name_;
  BufferPins pins_;
  napi_ref keep_ = nullptr;
  napi_deferred deferred_ = nullptr;
  napi_async_work work_ = nullptr;
  JobControlPtr control_;
  std::string error_;
  bool failed_ = false;
  bool memory_ = false;
  bool cancelled_ = false;
};

// Queues `job` (already checked; `void run(kgrank::JobControl*)`, given the control or null) over the arrays
// info[0 .. arrays) and returns its promise; `control_index` is where a job control may be passed. Views of resizable
// ArrayBuffers are refused: co-owning their store does not stop resize() from shrinking it under the job.
template <class Job>
Napi::Value queue_job(const Napi::CallbackInfo& info, const char* name, Job job, size_t arrays, size_t control_index,
                      Napi::Value owner = Napi::Value()) {
  JobControlPtr control = control_arg(info, control_index);
  for (size_t k = 0; k < arrays; ++k) {
    if (BufferPins::resizable(info.Env(), info[k])) {
      throw_type(info.Env(), "argument " + std::to_string(k) + " is a view of a resizable ArrayBuffer, which an async " +
                                 "job cannot hold (resize() could shrink it under the job): pass a copy");
    }
  }
  return JobWork<Job>::queue(info, name, std::move(job), arrays, owner, std::move(control));
}

}  // namespace kgrank_addon
