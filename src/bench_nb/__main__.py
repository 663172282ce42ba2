from bench_nb.cli import main

main()
