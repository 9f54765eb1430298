# check/cli_html_mish (tests/CMakeLists.txt): `opgrad check --op mish --html --json`, then
# verify_html checks the report against the JSON of the same run (a row per case, plots), and
# the run without --html prints the same table and writes the same JSON.
#   cmake -DOPGRAD=... -DVERIFY=... -DOUT=dir -P cli_html.cmake
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${OPGRAD} check --op mish --seed 3 --html ${OUT}/report.html
                        --json ${OUT}/with_html.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE with_html)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "opgrad check --html exited ${rc}:\n${with_html}")
endif()
if(NOT with_html MATCHES "HTML report: ${OUT}/report.html")
  message(FATAL_ERROR "no 'HTML report:' line:\n${with_html}")
endif()
execute_process(COMMAND ${VERIFY} ${OUT}/report.html --json ${OUT}/with_html.json
                        --min-plots 3 --failures 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verify_html failed")
endif()
# without --html: the same JSON, and the same table (the timing and the report line aside)
execute_process(COMMAND ${OPGRAD} check --op mish --seed 3 --json ${OUT}/plain.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE plain)
file(READ ${OUT}/with_html.json a)
file(READ ${OUT}/plain.json b)
if(NOT a STREQUAL b)
  message(FATAL_ERROR "--json differs with and without --html")
endif()
string(REGEX REPLACE " in [0-9.]+ s\n" "\n" with_html "${with_html}")
string(REGEX REPLACE " in [0-9.]+ s\n" "\n" plain "${plain}")
string(REPLACE "HTML report: ${OUT}/report.html\n" "" with_html "${with_html}")
if(NOT with_html STREQUAL plain)
  message(FATAL_ERROR "the table differs with and without --html")
endif()
