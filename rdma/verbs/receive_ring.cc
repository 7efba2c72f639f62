#include "rdma/verbs/receive_ring.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace strand::rdma::verbs {

absl::StatusOr<std::unique_ptr<ReceiveRing>> ReceiveRing::Create(
    std::shared_ptr<Device> device) {
  std::unique_ptr<ReceiveRing> ring(new ReceiveRing(std::move(device)));
  auto fail = [](absl::string_view step) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot create a receive ring: %s: %s", step, ErrnoText(errno)));
  };
  ring->slots_.reset(new Message[kSlots]);
  auto mr = ring->device_->Register(
      ring->slots_.get(), sizeof(Message) * kSlots, IBV_ACCESS_LOCAL_WRITE);
  if (!mr.ok()) return mr.status();
  ring->slots_mr_ = *std::move(mr);
  ring->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ring->stop_fd_ < 0) return fail("eventfd");
  ring->channel_ = ibv_create_comp_channel(ring->device_->context());
  if (ring->channel_ == nullptr) return fail("ibv_create_comp_channel");
  // Non-blocking: several handler threads wait on the channel and only one
  // gets each event; the others must not block in ibv_get_cq_event.
  const int flags = fcntl(ring->channel_->fd, F_GETFL);
  if (fcntl(ring->channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return fail("fcntl(O_NONBLOCK)");
  }
  ring->cq_ = ibv_create_cq(ring->device_->context(), kSlots, nullptr,
                            ring->channel_, 0);
  if (ring->cq_ == nullptr) return fail("ibv_create_cq");
  ibv_srq_init_attr attr{};
  attr.attr.max_wr = kSlots;
  attr.attr.max_sge = 1;
  ring->srq_ = ibv_create_srq(ring->device_->pd(), &attr);
  if (ring->srq_ == nullptr) return fail("ibv_create_srq");
  for (uint64_t slot = 0; slot < kSlots; ++slot) {
    if (absl::Status s = ring->PostSlot(slot); !s.ok()) return s;
  }
  return ring;
}

ReceiveRing::~ReceiveRing() {
  if (srq_ != nullptr && ibv_destroy_srq(srq_) != 0) {
    LOG(ERROR) << "ibv_destroy_srq: " << ErrnoText(errno);
  }
  if (cq_ != nullptr && ibv_destroy_cq(cq_) != 0) {
    LOG(ERROR) << "ibv_destroy_cq: " << ErrnoText(errno);
  }
  if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

absl::Status ReceiveRing::PostSlot(uint64_t slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(&slots_[slot]);
  sge.length = sizeof(Message);
  sge.lkey = slots_mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  const int rc = ibv_post_srq_recv(srq_, &wr, &bad);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrFormat("ibv_post_srq_recv: %s", ErrnoText(rc)));
  }
  return absl::OkStatus();
}

int ReceiveRing::PollOne(Message* message, uint32_t* qp_num) {
  ibv_wc wc;
  if (ibv_poll_cq(cq_, 1, &wc) <= 0) return 0;
  if (wc.status != IBV_WC_SUCCESS) {
    // A flushed receive comes from a queue pair torn down with its peer;
    // the slot itself is still ours.
    if (wc.status != IBV_WC_WR_FLUSH_ERR) {
      LOG(WARNING) << "a receive failed: " << ibv_wc_status_str(wc.status);
    }
  } else {
    *message = slots_[wc.wr_id];
    *qp_num = wc.qp_num;
  }
  if (absl::Status s = PostSlot(wc.wr_id); !s.ok()) {
    LOG(ERROR) << "receive slot lost: " << s;
  }
  return wc.status == IBV_WC_SUCCESS ? 1 : -1;
}

bool ReceiveRing::Next(Message* message, uint32_t* qp_num) {
  while (!stopped_.load(std::memory_order_acquire)) {
    int got = PollOne(message, qp_num);
    if (got > 0) return true;
    if (got < 0) continue;
    // Arm, then look again: a completion that arrived after the empty poll
    // but before the arming raises no event.
    if (ibv_req_notify_cq(cq_, 0) != 0) {
      LOG(ERROR) << "ibv_req_notify_cq: " << ErrnoText(errno);
    }
    got = PollOne(message, qp_num);
    if (got > 0) return true;
    if (got < 0) continue;
    pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      PLOG(ERROR) << "poll on the receive ring";
      return false;
    }
    if (fds[1].revents != 0) return false;
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    if (ibv_get_cq_event(channel_, &cq, &context) == 0) {
      ibv_ack_cq_events(cq, 1);
    }
  }
  return false;
}

int ReceiveRing::Restart() {
  uint64_t pending = 0;
  // Consume Stop's wake-up, so that poll() blocks again.
  if (read(stop_fd_, &pending, sizeof(pending)) < 0 && errno != EAGAIN) {
    PLOG(ERROR) << "cannot reset the receive ring's stop event";
  }
  int dropped = 0;
  Message discarded;
  uint32_t qp_num = 0;
  for (int got; (got = PollOne(&discarded, &qp_num)) != 0;) {
    if (got > 0) ++dropped;
  }
  stopped_.store(false, std::memory_order_release);
  return dropped;
}

void ReceiveRing::Stop() {
  stopped_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof(one)) != sizeof(one)) {
    PLOG(ERROR) << "cannot wake the handler threads";
  }
}

}  // namespace strand::rdma::verbs
