# ---- Fuzz targets replayed in every build (docs/fuzzing.md) ----------------------------------
# Each fuzz target is linked with a plain main() against ibscope_lib and run over its checked-in
# seeds and regressions: fuzz/replay/<name>, label fuzz-replay. The fuzzing itself (clang,
# libFuzzer) is the standalone project tests/fuzz/CMakeLists.txt, run by tests/fuzz/run_fuzzers.sh.
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
# The replay main() is compiled once for all targets.
add_library(ibscope_fuzz_replay_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp)
foreach(name IN LISTS IBSCOPE_FUZZ_TARGETS)
  add_executable(ibscope_fuzz_replay_${name} ${CMAKE_CURRENT_LIST_DIR}/targets/fuzz_${name}.cpp
                                             $<TARGET_OBJECTS:ibscope_fuzz_replay_main>)
  # ${PROJECT_SOURCE_DIR}/src: the private serializers of src/results/ the targets exercise.
  target_include_directories(ibscope_fuzz_replay_${name} PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                                                                 ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(ibscope_fuzz_replay_${name} PRIVATE ibscope_lib nlohmann_json::nlohmann_json)
  add_test(NAME fuzz/replay/${name}
           COMMAND ibscope_fuzz_replay_${name} ${CMAKE_CURRENT_LIST_DIR}/corpus/${name}
                   ${CMAKE_CURRENT_LIST_DIR}/regressions/${name})
  set_tests_properties(fuzz/replay/${name} PROPERTIES LABELS fuzz-replay TIMEOUT 60)
endforeach()
