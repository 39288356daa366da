// The one async job runner of the addon: runs a checked job (any type with `void run()`, built on the JavaScript
// thread) on a libuv worker thread, which fans out to kgrank's own pool, and settles a promise. Every JavaScript array
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
#pragma once
#include <napi.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "common.h"
#include "pin.h"

namespace kgrank_addon {

template <class Job>
class JobWork {
 public:
  // Queues `job` over the arrays info[0 .. arrays) and returns its promise; throws (Napi::Error) only before
  // anything is queued.
  static Napi::Value queue(const Napi::CallbackInfo& info, const char* name, Job&& job, size_t arrays,
                           Napi::Value owner) {
    Napi::Env env = info.Env();
    std::unique_ptr<JobWork> self(new JobWork(std::move(job), name));
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
    try {
      self->job_.run();
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
        if (error_.empty()) error_ = std::string(name_) + ": the native job failed";
        error = make_error(env, error_, memory_ ? "KGRANK_MEMORY" : "KGRANK_NATIVE");
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
  }

  Job job_;
  const char* name_;
  BufferPins pins_;
  napi_ref keep_ = nullptr;
  napi_deferred deferred_ = nullptr;
  napi_async_work work_ = nullptr;
  std::string error_;
  bool failed_ = false;
  bool memory_ = false;
};

// Queues `job` (already checked) over the arrays info[0 .. arrays) and returns its promise. Views of resizable
// ArrayBuffers are refused: co-owning their store does not stop resize() from shrinking it under the job.
template <class Job>
Napi::Value queue_job(const Napi::CallbackInfo& info, const char* name, Job job, size_t arrays,
                      Napi::Value owner = Napi::Value()) {
  for (size_t k = 0; k < arrays; ++k) {
    if (BufferPins::resizable(info.Env(), info[k])) {
      throw_type(info.Env(), "argument " + std::to_string(k) + " is a view of a resizable ArrayBuffer, which an async " +
                                 "job cannot hold (resize() could shrink it under the job): pass a copy");
    }
  }
  return JobWork<Job>::queue(info, name, std::move(job), arrays, owner);
}

}  // namespace kgrank_addon
