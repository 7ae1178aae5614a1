# Unity (jumbo) builds: -DIBSCOPE_UNITY_BUILD=ON compiles each target's sources in batches of
# IBSCOPE_UNITY_BATCH, so the heavy headers (fmt, nlohmann-json, CLI11, Catch2, the standard
# library) are parsed and their templates instantiated once per batch instead of once per file.
# The presets CI uses turn it on (CMakePresets.json); a developer editing one file at a time
# keeps it off (the default) and recompiles one file, not a batch. Sources with their own
# compile options (the -O3 reduction kernels) stay out of the batches.
option(IBSCOPE_UNITY_BUILD "Compile each target's sources in batches (unity build)" OFF)
set(IBSCOPE_UNITY_BATCH 12 CACHE STRING "Sources per unity batch")
if(IBSCOPE_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${IBSCOPE_UNITY_BATCH})
  message(STATUS "ibscope: unity build, ${IBSCOPE_UNITY_BATCH} sources per batch")
endif()
