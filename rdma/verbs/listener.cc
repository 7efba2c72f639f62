#include "rdma/verbs/listener.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

namespace strand::rdma::verbs {
namespace {

void DestroyAccepted(rdma_cm_id* id) {
  if (id->qp != nullptr) rdma_destroy_qp(id);
  rdma_destroy_id(id);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Listener>> Listener::Start(
    std::shared_ptr<Device> device, const std::string& address, uint16_t port,
    OnRequest on_request) {
  std::unique_ptr<Listener> l(
      new Listener(std::move(device), std::move(on_request)));
  auto fail = [&](absl::string_view step) {
    return absl::UnavailableError(
        absl::StrFormat("cannot listen for RDMA connections on %s:%d: %s: %s",
                        address, port, step, ErrnoText(errno)));
  };
  l->stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (l->stop_fd_ < 0) return fail("eventfd");
  l->channel_ = rdma_create_event_channel();
  if (l->channel_ == nullptr) return fail("rdma_create_event_channel");
  if (rdma_create_id(l->channel_, &l->listen_id_, nullptr, RDMA_PS_TCP) != 0) {
    l->listen_id_ = nullptr;
    return fail("rdma_create_id");
  }
  rdma_addrinfo hints{};
  hints.ai_flags = RAI_PASSIVE;
  hints.ai_port_space = RDMA_PS_TCP;
  rdma_addrinfo* info = nullptr;
  const std::string port_text = std::to_string(port);
  if (rdma_getaddrinfo(address.c_str(), port_text.c_str(), &hints, &info) !=
      0) {
    return fail("rdma_getaddrinfo");
  }
  const int rc = rdma_bind_addr(l->listen_id_, info->ai_src_addr);
  rdma_freeaddrinfo(info);
  if (rc != 0) return fail("rdma_bind_addr");
  if (l->listen_id_->verbs != l->device_->context()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is not on RDMA device %s", address, l->device_->name()));
  }
  if (rdma_listen(l->listen_id_, 64) != 0) return fail("rdma_listen");
  l->port_ = ntohs(rdma_get_src_port(l->listen_id_));
  l->thread_ = std::thread(&Listener::Loop, l.get());
  return l;
}

Listener::~Listener() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof(one)) != sizeof(one)) {
      PLOG(ERROR) << "cannot wake the RDMA listener thread";
    }
    thread_.join();
  }
  absl::MutexLock lock(&mu_);
  for (const auto& [id, owner] : accepted_) DestroyAccepted(id);
  if (listen_id_ != nullptr) rdma_destroy_id(listen_id_);
  if (channel_ != nullptr) rdma_destroy_event_channel(channel_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void Listener::Loop() {
  for (;;) {
    pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      PLOG(ERROR) << "RDMA listener on port " << port_ << " stops";
      return;
    }
    if (fds[1].revents != 0) return;
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel_, &event) != 0) continue;
    rdma_cm_id* id = event->id;
    const rdma_cm_event_type type = event->event;
    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
      const rdma_conn_param request = event->param.conn;
      const bool keep = HandleRequest(id, request);
      // An id cannot be destroyed before its event is acked.
      rdma_ack_cm_event(event);
      if (!keep) DestroyAccepted(id);
      continue;
    }
    rdma_ack_cm_event(event);
    switch (type) {
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED:
        // The peer is gone: free its queue pair now, not at shutdown.
        if (Forget(id)) DestroyAccepted(id);
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        LOG(ERROR) << "RDMA device " << device_->name()
                   << " was removed; connections on port " << port_
                   << " are dead";
        break;
      default:
        break;
    }
  }
}

bool Listener::HandleRequest(rdma_cm_id* id, const rdma_conn_param& request) {
  auto accept = on_request_(
      absl::string_view(static_cast<const char*>(request.private_data),
                        request.private_data_len));
  if (!accept.ok()) {
    LOG(WARNING) << "rejecting an RDMA connection on port " << port_ << ": "
                 << accept.status();
    rdma_reject(id, nullptr, 0);
    return false;
  }
  // Held until the id is recorded: a Fence either refuses it here or finds
  // it in accepted_.
  absl::MutexLock lock(&mu_);
  if (auto floor = admitted_from_.find(accept->owner);
      floor != admitted_from_.end() && accept->incarnation < floor->second) {
    LOG(WARNING) << "refusing a connection of compute node " << accept->owner
                 << " on port " << port_ << ": its incarnation "
                 << accept->incarnation << " was fenced";
    rdma_reject(id, nullptr, 0);
    return false;
  }
  ibv_qp_init_attr attr{};
  attr.send_cq = accept->cq;
  attr.recv_cq = accept->cq;
  attr.srq = accept->srq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 1;
  attr.cap.max_recv_wr = accept->srq != nullptr ? 0 : 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, device_->pd(), &attr) != 0) {
    PLOG(ERROR) << "rdma_create_qp for an incoming connection on port "
                << port_;
    rdma_reject(id, nullptr, 0);
    return false;
  }
  rdma_conn_param param{};
  param.private_data = accept->reply.data();
  param.private_data_len = static_cast<uint8_t>(accept->reply.size());
  // Serve as many READs/atomics in flight as the requester issues, up to
  // what this device allows.
  param.responder_resources =
      std::min(request.initiator_depth, device_->rd_atomic_depth());
  param.initiator_depth =
      std::min(request.responder_resources, device_->rd_atomic_depth());
  param.rnr_retry_count = 7;
  if (rdma_accept(id, &param) != 0) {
    PLOG(ERROR) << "rdma_accept on port " << port_;
    return false;
  }
  accepted_.emplace(id, accept->owner);
  senders_[id->qp->qp_num] = Sender{accept->owner, accept->incarnation};
  uint64_t& latest = latest_[accept->owner];
  latest = std::max(latest, accept->incarnation);
  return true;
}

bool Listener::Forget(rdma_cm_id* id) {
  absl::MutexLock lock(&mu_);
  return accepted_.erase(id) > 0;
}

bool Listener::EnterHandler(uint32_t qp_num, int* owner) {
  absl::ReaderMutexLock lock(&mu_);
  *owner = -1;
  auto sender = senders_.find(qp_num);
  if (sender == senders_.end() || sender->second.owner < 0 ||
      sender->second.owner >= kOwners) {
    return true;  // not a fenceable compute node's
  }
  const int o = sender->second.owner;
  if (auto floor = admitted_from_.find(o);
      floor != admitted_from_.end() &&
      sender->second.incarnation < floor->second) {
    return false;
  }
  // Under mu_: a Fence either saw this count (it locked after us) or we
  // saw its floor (we locked after it).
  handlers_[o].fetch_add(1, std::memory_order_relaxed);
  *owner = o;
  return true;
}

void Listener::ExitHandler(int owner) {
  if (owner >= 0) handlers_[owner].fetch_sub(1, std::memory_order_release);
}

absl::StatusOr<int> Listener::Fence(int owner) {
  absl::StatusOr<int> stopped = FenceQueuePairs(owner);
  if (!stopped.ok() || owner < 0 || owner >= kOwners) return stopped;
  // Handlers never wait long (what they send the fenced node fails at
  // once): this ends within one's run.
  while (handlers_[owner].load(std::memory_order_acquire) > 0) {
    std::this_thread::yield();
  }
  return stopped;
}

absl::StatusOr<int> Listener::FenceQueuePairs(int owner) {
  absl::MutexLock lock(&mu_);
  // Incarnations are their start times (VerbsFabric::incarnation): one
  // that started before now is refused even if it never connected here.
  uint64_t& floor = admitted_from_[owner];
  floor = std::max({floor, latest_[owner] + 1,
                    static_cast<uint64_t>(absl::GetCurrentTimeNanos())});
  int stopped = 0;
  for (const auto& [id, id_owner] : accepted_) {
    if (id_owner != owner || id->qp == nullptr) continue;
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    if (ibv_modify_qp(id->qp, &attr, IBV_QP_STATE) != 0) {
      return absl::InternalError(absl::StrFormat(
          "cannot move a queue pair of compute node %d on port %d to the "
          "error state: %s",
          owner, port_, ErrnoText(errno)));
    }
    // Tells a live peer at once; a paused one finds out when it resumes.
    rdma_disconnect(id);
    ++stopped;
  }
  return stopped;
}

}  // namespace strand::rdma::verbs
