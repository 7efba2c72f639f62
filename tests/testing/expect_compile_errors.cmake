# cmake -DBUILD_DIR=<dir> -DTARGET=<target> -DEXPECTED=<messages> -P this:
# builds <target> and succeeds only if the build fails with exactly one
# compiler error per entry of <messages> (separated by |), each error
# containing its entry (an entry may appear several times), and no other
# error. For checks that must stop a build (strand_compile_fail_test).

string(REPLACE "|" ";" EXPECTED "${EXPECTED}")

execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                OUTPUT_VARIABLE output ERROR_VARIABLE output
                RESULT_VARIABLE result)
if(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but must not:\n${output}")
endif()

string(REGEX MATCHALL "error: [^\n]*" errors "${output}")
set(missing "")
foreach(expected IN LISTS EXPECTED)
  set(found -1)
  set(index 0)
  foreach(error IN LISTS errors)
    string(FIND "${error}" "${expected}" at)
    if(NOT at EQUAL -1)
      set(found ${index})
      break()
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  if(found EQUAL -1)
    list(APPEND missing "${expected}")
  else()
    list(REMOVE_AT errors ${found})
  endif()
endforeach()

if(missing OR errors)
  string(REPLACE ";" "\n  " missing "${missing}")
  string(REPLACE ";" "\n  " errors "${errors}")
  message(FATAL_ERROR
    "${TARGET}: expected errors not seen:\n  ${missing}\n"
    "errors not expected:\n  ${errors}\n\nfull output:\n${output}")
endif()
message(STATUS "${TARGET}: failed to compile with exactly the expected errors")
