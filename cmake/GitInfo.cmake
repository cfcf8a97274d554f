# Run at every build (cmake -P): writes git_info.cpp with the current commit and dirty flag, touching
# the file only when they changed, so an unchanged tree rebuilds nothing.
set(GIT_COMMIT "unknown")
set(GIT_DIRTY "false")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse HEAD OUTPUT_VARIABLE commit
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    set(GIT_COMMIT ${commit})
    # Dirty: the code differs from the commit. Measurements waiting in results/ change no code.
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} status --porcelain --untracked-files=no -- . :!results
                    OUTPUT_VARIABLE status ERROR_QUIET)
    if(NOT status STREQUAL "")
      set(GIT_DIRTY "true")
    endif()
  endif()
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
