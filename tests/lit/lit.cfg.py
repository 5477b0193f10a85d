# lit configuration for tfc: FileCheck tests over .tfm models, .mlir IR and the CLI.
import os
import shutil
import subprocess
import lit.formats
from lit.llvm import llvm_config

config.name = "tfc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".tfm", ".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfc_obj_root, "tests", "lit")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%examples", os.path.join(config.tfc_src_root, "examples")))
config.substitutions.append(("%src_root", config.tfc_src_root))
config.substitutions.append(("%fixtures", os.path.join(config.tfc_src_root, "tests", "fixtures")))

# Commands that compile kernels keep them in a persistent cache; the tests
# share one under the build tree (and so also run concurrent writers).
config.environment["XDG_CACHE_HOME"] = os.path.join(config.test_exec_root, "cache")

# The real all-MiniLM-L6-v2 (scripts/fetch-minilm.sh, run by `make test`).
minilm = os.path.join(config.tfc_obj_root, "models", "all-minilm-l6-v2")
config.substitutions.append(("%minilm", minilm))
if os.path.exists(os.path.join(minilm, "model.safetensors")):
    config.available_features.add("minilm")

# AVX-512F (fp32 products on weight panels through an extern stage:
# tests/lit/compile/f32-panel-stage.test), AVX512_BF16 (`--dtype bf16` runs only on
# such CPUs: tests/lit/fixtures/bf16.test), and AMX (bf16 products on tiles:
# tests/lit/compile/bf16-amx.test).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = cpuinfo.read()
        if " avx512f" in flags:
            config.available_features.add("avx512f")
        if " avx512_bf16" in flags:
            config.available_features.add("avx512-bf16")
        if " amx_bf16" in flags and " amx_tile" in flags:
            config.available_features.add("amx")
except OSError:
    pass

# A disassembler (tests/lit/compile/bf16-isa.test reads the kernels' code).
objdump = shutil.which("llvm-objdump", path=config.llvm_tools_dir) or \
    shutil.which("llvm-objdump-19")
if objdump:
    config.available_features.add("llvm-objdump")
    config.substitutions.append(("%llvm_objdump", objdump))

# The CUDA toolkit's PTX assembler (tests/lit/cuda: offline checks, no GPU).
if os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
    config.available_features.add("ptxas")

# An OpenCL implementation for CPUs (PoCL, Debian pocl-opencl-icd) and the
# loader Halide's OpenCL runtime opens (libOpenCL.so, ocl-icd-opencl-dev):
# tests/lit/cuda/opencl-*.test run the GPU schedules through OpenCL.
if os.path.exists("/etc/OpenCL/vendors/pocl.icd") and any(
    os.path.exists(os.path.join(d, "libOpenCL.so"))
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
              "/usr/lib64", "/usr/lib")):
    config.available_features.add("pocl")

# An NVIDIA GPU (tests/lit/cuda/gpu-run.test); CI has none.
if shutil.which("nvidia-smi"):
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                text=True, timeout=30)
        if listed.returncode == 0 and "GPU" in listed.stdout:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass

llvm_config.with_environment("PATH", config.tfc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
tools = ["tfc", "tfc-opt", "tfc-parse", "FileCheck", "not", "count", "split-file"]
llvm_config.add_tool_substitutions(tools, [config.tfc_tools_dir, config.llvm_tools_dir])
