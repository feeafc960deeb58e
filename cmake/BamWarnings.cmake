# Flags for bam's own targets only (never global), so dependencies build as they like.
function(bam_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
      -Wno-psabi>
    # -Wno-attributes: with relocatable device code, nvcc's front end declares every
    # function `inline` again ahead of its definition, and the host compiler then warns that a
    # __noinline__ definition follows an inline declaration (a form it accepts everywhere else).
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-attributes --expt-relaxed-constexpr>)
  if(BAM_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
endfunction()
