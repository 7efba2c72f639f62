#ifndef STRAND_TESTS_TESTING_TEST_FABRIC_H_
#define STRAND_TESTS_TESTING_TEST_FABRIC_H_

// How tests get a fabric. Tests describe the deployment they need
// (memory nodes, compute nodes, pool size) and MakeTestFabric builds it on
// the backend the test run is for, so the same suites run on every backend.

#include <memory>

#include "rdma/fabric.h"
#include "rdma/fabric_options.h"

namespace strand::testing {

// Small, free-of-cost defaults for tests.
rdma::FabricOptions TestFabricOptions(int memory_nodes = 1,
                                      int compute_nodes = 1);

// Builds the fabric or fails the test (ASSERT in the caller on nullptr).
std::unique_ptr<rdma::Fabric> MakeTestFabric(
    const rdma::FabricOptions& options);

}  // namespace strand::testing

#endif  // STRAND_TESTS_TESTING_TEST_FABRIC_H_
