"""Reading and writing case files: `load_cases`, `dump_cases`, `case_file_schema`.

The import path kept for the case files' API; the code is the `agenteval.casefiles` package
(one reader per format behind one entry point).
"""

from agenteval.casefiles import case_file_schema, dump_cases, load_cases

__all__ = ["case_file_schema", "dump_cases", "load_cases"]
