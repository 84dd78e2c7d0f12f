from . import allocator

allocator.configure()  # before anything imports torch

from .protocol import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
