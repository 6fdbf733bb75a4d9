# Writes OUT with the current git commit, touching it only when it changes.
# PB_GIT_COMMIT in the environment wins: a copy of the tree shipped to another
# machine may carry a stale .git, or none.
if(DEFINED ENV{PB_GIT_COMMIT} AND NOT "$ENV{PB_GIT_COMMIT}" STREQUAL "")
  set(commit "$ENV{PB_GIT_COMMIT}")
else()
  execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0 OR commit STREQUAL "")
    set(commit "unknown")
  else()
    execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT dirty STREQUAL "")
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
set(text "#define PB_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
