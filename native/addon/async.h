// The one async worker of the addon: runs a checked job (any type with `void run() const`, built on the JavaScript
// thread) on a libuv worker thread, which fans out to kgrank's own pool, and settles a promise. Every JavaScript array
// the job reads or writes is held by a reference until the promise settles, so none can be collected meanwhile, and
// its buffer is pinned (pin.h), so none can be detached and freed meanwhile; `owner` (e.g. the FilterIndex whose
// index the job reads) is held the same way.
#pragma once
#include <napi.h>

#include <string>

#include "common.h"
#include "pin.h"

namespace kgrank_addon {

template <class Job>
class JobWorker : public Napi::AsyncWorker {
 public:
  // The job's arrays are info[0 .. arrays).
  JobWorker(const Napi::CallbackInfo& info, const char* name, const Job& job, size_t arrays, Napi::Value owner)
      : Napi::AsyncWorker(info.Env(), name), job_(job), deferred_(Napi::Promise::Deferred::New(info.Env())) {
    Napi::Env env = info.Env();
    keep_ = Napi::Persistent(Napi::Object::New(env));
    if (!owner.IsEmpty() && !owner.IsUndefined()) keep_.Value().Set("owner", owner);
    for (size_t k = 0; k < arrays; ++k) {
      keep_.Value().Set(static_cast<uint32_t>(k), info[k]);
      pins_.add(env, info[k]);
    }
  }
  Napi::Promise promise() const { return deferred_.Promise(); }
  void Execute() override { job_.run(); }
  void OnOK() override {
    settle();
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    settle();
    deferred_.Reject(e.Value());
  }

 private:
  void settle() {
    pins_.release();
    keep_.Reset();
  }

  Job job_;
  BufferPins pins_;
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference keep_;
};

// Queues `job` (already checked) over the arrays info[0 .. arrays) and returns its promise. Views of resizable
// ArrayBuffers are refused: co-owning their store does not stop resize() from shrinking it under the job.
template <class Job>
Napi::Value queue_job(const Napi::CallbackInfo& info, const char* name, const Job& job, size_t arrays,
                      Napi::Value owner = Napi::Value()) {
  for (size_t k = 0; k < arrays; ++k) {
    if (BufferPins::resizable(info.Env(), info[k])) {
      throw_type(info.Env(), "argument " + std::to_string(k) + " is a view of a resizable ArrayBuffer, which an async " +
                                 "job cannot hold (resize() could shrink it under the job): pass a copy");
    }
  }
  auto* worker = new JobWorker<Job>(info, name, job, arrays, owner);
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace kgrank_addon
