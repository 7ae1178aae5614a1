# ---- LeakSanitizer over the main commands (tests/leaks/README.md) -------------------------
# Only in the sanitizer build: run, allreduce, p2p, topo, validate, fit, report, predict, model,
# algorithms and two error paths, each for real and small, with leak detection on. ~2 min.
if(IBSCOPE_SANITIZE)
  add_test(NAME leaks/main-commands
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/leaks/check_main_commands.sh $<TARGET_FILE:ibscope>)
  set_tests_properties(leaks/main-commands PROPERTIES LABELS leaks RUN_SERIAL TRUE TIMEOUT 600)
endif()
