# Token-exact history: the multi-turn bench at temperature 1 hits the cache as much as
# at temperature 0 (replies are sent back as text; the engine renders them as
# the ids it generated). Runs `bench --compare` at temperature 1 (which also
# fails when any cache setting's replies differ from off's) and radix at
# temperature 0, and compares radix's hit rates.
# Usage: cmake -DCLI=... -DMODEL=... -P bench-temperature-check.cmake
set(args bench --model ${MODEL} --workload multi-turn --requests 12 --concurrency 2
  --max-tokens 32 --threads 1 --json)
execute_process(COMMAND ${CLI} ${args} --compare --temperature 1
  OUTPUT_VARIABLE hot RESULT_VARIABLE rc_hot ERROR_VARIABLE err_hot)
if(NOT rc_hot EQUAL 0)
  message(FATAL_ERROR "bench at temperature 1 failed (${rc_hot}): ${err_hot}\n${hot}")
endif()
execute_process(COMMAND ${CLI} ${args} --cache radix --temperature 0
  OUTPUT_VARIABLE cold RESULT_VARIABLE rc_cold ERROR_VARIABLE err_cold)
if(NOT rc_cold EQUAL 0)
  message(FATAL_ERROR "bench at temperature 0 failed (${rc_cold}): ${err_cold}")
endif()
string(JSON first_cache GET "${hot}" 0 cache)
if(NOT first_cache STREQUAL "radix")
  message(FATAL_ERROR "expected radix first in --compare, got ${first_cache}")
endif()
string(JSON hit_hot GET "${hot}" 0 hit_rate)
string(JSON hit_cold GET "${cold}" hit_rate)
string(JSON temp_hot GET "${hot}" 0 temperature)
message(STATUS "radix hit rate: ${hit_hot} at temperature ${temp_hot}, ${hit_cold} at 0")
# Integers in thousandths (CMake has no floating-point comparison).
string(REGEX MATCH "^0\\.([0-9][0-9][0-9])" _ "${hit_hot}")
set(hot_m "${CMAKE_MATCH_1}")
string(REGEX MATCH "^0\\.([0-9][0-9][0-9])" _ "${hit_cold}")
set(cold_m "${CMAKE_MATCH_1}")
if(hot_m STREQUAL "" OR cold_m STREQUAL "")
  message(FATAL_ERROR "hit rates not in (0, 1): ${hit_hot}, ${hit_cold}")
endif()
math(EXPR hot_m "1${hot_m} - 1000")
math(EXPR cold_m "1${cold_m} - 1000")
# The prompts differ (other replies), so allow one percentage point.
math(EXPR floor "${cold_m} - 10")
if(hot_m LESS floor)
  message(FATAL_ERROR "temperature 1 hits ${hit_hot}, temperature 0 hits ${hit_cold}")
endif()
