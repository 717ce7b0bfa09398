"""What the benchmark plots (plot_conv.py, plot_stencil.py, plot_jacobi.py)
share: the CSV lines of their logs, bars labelled with their values, the floor
line, and the finish of a fraction-of-the-floor figure."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def csv_rows(paths):
    """The fields of every `CSV,...` line of the logs at `paths`, in order."""
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("CSV,"):
                    yield line.strip().split(",")


def passed(value, check):
    """A row to draw: its check passed and its value is a number (not NaN)."""
    return check == "PASS" and value == value


def labelled_bars(ax, xs, ys, width, label, fontsize=8, **style):
    """Bars with their values printed on top (matplotlib 3.4 and later)."""
    bars = ax.bar(xs, ys, width, label=label, **style)
    if hasattr(ax, "bar_label"):
        ax.bar_label(bars, fmt="%.2f", fontsize=fontsize)
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)  # the floor


def save_fraction_figure(fig, ax, path, title, ylabel="fraction of the floor", ncol=3, grid_axis="both"):
    """Title, room for the legend above the floor line, grid, legend; writes `path`."""
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(0, max(1.3, ax.get_ylim()[1]))
    ax.grid(True, axis=grid_axis, alpha=0.3)
    ax.legend(loc="upper center", ncol=ncol, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
