#!/bin/sh
# Prints the CMAKE_ARGS with which setup.sh and the Dockerfile compile llama.cpp (llama-cpp-python):
# without its multimodal (LLaVA) part, which is not needed, to shorten the build; on x86-64 for this CPU
# (-march=native) but without Intel AMX: on a virtual machine whose CPU lists AMX, llama.cpp's AMX matrix
# kernels stop the process with an illegal instruction (tileloadd) when a Q4_0/Q4_1/Q8_0 model reads a
# prompt (seen with SmolLM2-135M Q4_1 on an Intel Xeon under Firecracker).
args="-DLLAVA_BUILD=OFF"
if [ "$(uname -m)" = x86_64 ]; then
  no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  args="$args '-DCMAKE_C_FLAGS=$no_amx' '-DCMAKE_CXX_FLAGS=$no_amx'"
fi
echo "$args"
