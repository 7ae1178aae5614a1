# ---- LeakSanitizer over the main commands (tests/leaks/README.md) -------------------------
# Only in the sanitizer build: a canary that leaks on purpose must be reported first; then run,
# allreduce, p2p, topo, validate, fit, report, predict, model, algorithms and two error paths,
# each for real and small, with leak detection on. About a minute on 2 cores.
if(IBSCOPE_SANITIZE)
  add_executable(ibscope_leak_canary ${CMAKE_CURRENT_LIST_DIR}/leak_canary.cpp)
  target_link_libraries(ibscope_leak_canary PRIVATE fmt::fmt)
  add_test(NAME leaks/main-commands
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_main_commands.sh $<TARGET_FILE:ibscope>
                   $<TARGET_FILE:ibscope_leak_canary>)
  set_tests_properties(leaks/main-commands PROPERTIES LABELS leaks RUN_SERIAL TRUE TIMEOUT 600)
endif()
