# cmake -DOBJCOPY= -DBUNDLER= -DOBJECT= -DARCHS="gfx90a;gfx942" -DOUT_PREFIX= -P this
# Takes the offload bundle out of a hipcc host object (section .hip_fatbin) and unbundles one
# AMD GPU code object (ELF) per architecture: OUT_PREFIX.bundle, OUT_PREFIX-<arch>.co.
execute_process(COMMAND ${OBJCOPY} --dump-section=.hip_fatbin=${OUT_PREFIX}.bundle ${OBJECT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llvm-objcopy could not extract .hip_fatbin from ${OBJECT}: ${err}")
endif()
foreach(arch IN LISTS ARCHS)
  execute_process(COMMAND ${BUNDLER} --unbundle --type=o --input=${OUT_PREFIX}.bundle
                          --targets=hipv4-amdgcn-amd-amdhsa--${arch}
                          --output=${OUT_PREFIX}-${arch}.co
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "clang-offload-bundler: no ${arch} code object in ${OBJECT}: ${err}")
  endif()
endforeach()
