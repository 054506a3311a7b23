# Run after syncpoint_tests is built (cmake -P): writes OUT, a ctest file with one test per
# test file, each running that file's cases in one process, less the doctest suites EXCLUDE
# (comma-separated; those cases are a ctest each, from doctest_discover_tests).
#
# Why by file: a Release test process takes about 1 s to start (LibTorch's libraries), and
# most cases take less than that (docs/hardening.md, "Time"). The files come from one listing
# (doctest's XML reporter names each case's file), so a new test file needs no edit here, and
# a file whose cases are all in EXCLUDE adds no test.
foreach(var EXE OUT EXCLUDE TIMEOUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "tests_by_file.cmake: -D ${var}=... is missing")
  endif()
endforeach()
execute_process(COMMAND "${EXE}" --list-test-cases --reporters=xml --no-version
                        "--test-suite-exclude=${EXCLUDE}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "tests_by_file.cmake: '${EXE} --list-test-cases' exited with ${status}")
endif()
string(REGEX MATCHALL "filename=\"[^\"]*\"" files "${listing}")
set(stems)
foreach(file ${files})
  string(REGEX REPLACE "^filename=\"(.*)\"$" "\\1" file "${file}")
  get_filename_component(stem "${file}" NAME_WE)
  list(APPEND stems ${stem})
endforeach()
list(REMOVE_DUPLICATES stems)
if(NOT stems)
  message(FATAL_ERROR "tests_by_file.cmake: '${EXE}' listed no test case outside ${EXCLUDE}")
endif()
set(content "# Written by cmake/tests_by_file.cmake after each build of ${EXE}\n")
foreach(stem ${stems})
  string(APPEND content "add_test([=[${stem}]=] [=[${EXE}]=] [=[--source-file=*/${stem}.cpp]=] "
                        "[=[--test-suite-exclude=${EXCLUDE}]=])\n"
                        "set_tests_properties([=[${stem}]=] PROPERTIES TIMEOUT ${TIMEOUT})\n")
endforeach()
file(WRITE "${OUT}" "${content}")
