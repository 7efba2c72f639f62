#ifndef STRAND_TESTS_TESTING_TEST_FABRIC_H_
#define STRAND_TESTS_TESTING_TEST_FABRIC_H_

// How tests get a fabric. Tests describe the deployment they need
// (memory nodes, compute nodes, pool size) and MakeTestFabric builds it on
// the backend the test run is for, so the same suites run on every backend.
//
// The backend comes from the environment:
//   STRAND_TEST_FABRIC=loopback (default) | verbs
//   STRAND_TEST_RDMA_ADDRESS   verbs: an address of this machine on an RDMA
//                              device (default: $RDMA_VM_IP, set inside the
//                              Soft-RoCE VM of shared/rdma-vm)
//   STRAND_TEST_MESSAGE_DELIVERY=inline (default) | threads: how the loopback
//                              delivers messages (fabric_options.h); ctest
//                              runs the protocol suites in both
//   STRAND_TEST_CPU_PATH=ablation: the CPU-path switches off
//                              (cpu_path.h); ctest runs the protocol,
//                              index and transaction suites both ways
// On verbs the whole deployment lives in the test process: the memory nodes
// are served here and the compute nodes connect to them over the device.

#include <memory>

#include "rdma/fabric.h"
#include "rdma/fabric_options.h"

namespace strand::testing {

// The backend of this test run (STRAND_TEST_FABRIC).
rdma::FabricKind TestFabricKind();
// The loopback's message delivery for this run (STRAND_TEST_MESSAGE_DELIVERY).
rdma::MessageDelivery TestMessageDelivery();
// Whether this run turns the CPU-path switches off (STRAND_TEST_CPU_PATH).
bool TestCpuPathAblation();

// Small, free-of-cost defaults for tests, on TestFabricKind().
rdma::FabricOptions TestFabricOptions(int memory_nodes = 1,
                                      int compute_nodes = 1);

// Builds the fabric or fails the test (ASSERT in the caller on nullptr).
std::unique_ptr<rdma::Fabric> MakeTestFabric(
    const rdma::FabricOptions& options);

}  // namespace strand::testing

#endif  // STRAND_TESTS_TESTING_TEST_FABRIC_H_
