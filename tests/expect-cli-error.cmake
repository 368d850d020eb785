# cmake -DCLI=... -DARGS=a;b;c -DPATTERN=... -P expect-cli-error.cmake
# Passes when the command exits with status 1 (not a crash) and prints one
# line on stderr, "radixchat-cli: ...", containing PATTERN.
execute_process(COMMAND ${CLI} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "expected exit status 1, got '${rc}'; stderr: ${err}")
endif()
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines n)
if(NOT n EQUAL 1 OR NOT err MATCHES "^radixchat-cli: ")
  message(FATAL_ERROR "expected one 'radixchat-cli: ...' line on stderr, got: ${err}")
endif()
string(FIND "${err}" "${PATTERN}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "stderr lacks '${PATTERN}': ${err}")
endif()
