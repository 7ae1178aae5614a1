# The fuzz targets, shared by the replay tests of the normal build (tests/fuzz/replay.cmake)
# and the libFuzzer build (tests/fuzz/CMakeLists.txt), so that the two cannot drift apart.
# Each name has tests/fuzz/targets/fuzz_<name>.cpp, seeds in tests/fuzz/corpus/<name>/ and
# crashes turned into regressions in tests/fuzz/regressions/<name>/ (docs/fuzzing.md).
set(IBSCOPE_FUZZ_TARGETS args wire results tuning workload topology peer_info nccl_tests counts baseline)

# The library sources the parsers need, compiled by the libFuzzer build instead of the whole
# library (paths relative to the repository root). A target links only what it reaches.
set(IBSCOPE_FUZZ_LIBRARY_SOURCES
    src/core/error.cpp
    src/core/units.cpp
    src/core/aligned_buffer.cpp
    src/cli/list_args.cpp
    src/cli/memory_request.cpp
    src/memory/mem_path.cpp
    src/memory/space_buffer.cpp
    src/gpu/cuda_unavailable.cpp
    src/measure/sweep.cpp
    src/measure/time_average.cpp
    src/bootstrap/wire.cpp
    src/core/datatype.cpp
    src/collectives/descriptors.cpp
    src/collectives/collective.cpp
    src/collectives/registry.cpp
    src/collectives/cost.cpp
    src/collectives/harness/tuning.cpp
    src/results/acceptance_json.cpp
    src/results/accept_patterns_json.cpp
    src/results/congestion_json.cpp
    src/results/loopback_json.cpp
    src/results/baseline_json.cpp
    src/results/collective_columns.cpp
    src/results/document.cpp
    src/results/document_json.cpp
    src/results/loader.cpp
    src/results/nccl_tests_document.cpp
    src/results/nccl_tests_json.cpp
    src/results/nccl_tests_parser.cpp
    src/results/nic_counters_json.cpp
    src/fabric/counter_catalog.cpp
    src/fabric/counter_delta.cpp
    src/measure/stats.cpp
    src/results/upgrade.cpp
    src/results/soak_json.cpp
    src/results/tuning_json.cpp
    src/results/topology_json.cpp
    src/results/schema_validator.cpp
    src/model/workload.cpp
    src/model/workload_json.cpp
    src/model/transformer.cpp
    src/model/moe.cpp
    src/topo/host_merge.cpp
    src/topo/host_topology.cpp
    src/topo/pci_distance.cpp
    src/collectives/pattern/alltoallv_counts.cpp
    src/collectives/pattern/alltoallv_counts_file.cpp
    probes/peer_info.cpp)

# Targets that reach the collectives' algorithm registry (registry.cpp) or descriptors
# (descriptors.cpp): the factories reference the algorithms, which need UCX, and the descriptors'
# hooks the verification patterns; a parser calls neither. They are left
# out and their symbols left unresolved rather than compiling the transport for a name list.
set(IBSCOPE_FUZZ_REGISTRY_TARGETS results tuning)
