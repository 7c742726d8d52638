//! The tile grid of a DISTAL matrix multiplication `A = B C` as the CUDA
//! backend runs it: which tiles each operand has, which unit owns each, and
//! which tiles each unit multiplies at each step. The driver in
//! [`super::apps`] walks these instead of writing the grid loops out per
//! operand and per launch.

use super::plan::{GemmAlgo, Workload};

/// One of the three operands, with its region number in
/// [`super::apps::regions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// The product, `gi x gj` tiles (region 0).
    A,
    /// The left factor, `gi x gk` tiles (region 1).
    B,
    /// The right factor, `gk x gj` tiles (region 2).
    C,
}

impl Operand {
    /// The operand's region.
    pub fn region(self) -> usize {
        match self {
            Operand::A => 0,
            Operand::B => 1,
            Operand::C => 2,
        }
    }
}

/// One tile of an operand: its row and column in the tile grid, its piece
/// of the operand's region, and the unit that owns it (its home).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    pub row: usize,
    pub col: usize,
    pub piece: usize,
    pub owner: usize,
}

/// One tile product a unit computes: `A(i, j) += B(i, k) C(k, j)`, as the
/// pieces of the three regions, and the unit (a 3-D algorithm's unit also
/// names its piece of the partial products).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Product {
    pub a: usize,
    pub b: usize,
    pub c: usize,
    pub unit: usize,
}

/// The tile grid of a GEMM workload.
#[derive(Debug, Clone, Copy)]
pub struct TileGrid {
    pub algo: GemmAlgo,
    pub gi: usize,
    pub gj: usize,
    pub gk: usize,
    /// Every `(i, j, k)` is its own unit, and partial products are reduced
    /// into `A` (Johnson, Solomonik, COSMA); otherwise the units are the
    /// `(i, j)` tiles of `A` and step through `k`.
    pub three_d: bool,
}

impl TileGrid {
    /// The grid of a GEMM workload; `None` for the other workloads.
    pub fn of(w: &Workload) -> Option<TileGrid> {
        match *w {
            Workload::Gemm {
                algo,
                grid: [gi, gj, gk],
                three_d,
                ..
            } => Some(TileGrid {
                algo,
                gi,
                gj,
                gk,
                three_d,
            }),
            _ => None,
        }
    }

    /// The unit of tile `(i, j)` at layer `k` (`k` is ignored by a 2-D
    /// algorithm, whose units are the tiles of `A`).
    pub fn unit(&self, i: usize, j: usize, k: usize) -> usize {
        if self.three_d {
            (i * self.gj + j) * self.gk + k
        } else {
            i * self.gj + j
        }
    }

    /// The unit that owns operand tile `(row, col)`: `A(i, j)` its own
    /// unit's; `B(i, k)` and `C(k, j)` the layer-`k` unit of a 3-D
    /// algorithm, or the unit `k` tiles along in the 2-D grid.
    pub fn owner(&self, operand: Operand, row: usize, col: usize) -> usize {
        match (operand, self.three_d) {
            (Operand::A, _) => self.unit(row, col, 0),
            (Operand::B, true) => self.unit(row, 0, col),
            (Operand::B, false) => self.unit(row, col % self.gj, 0),
            (Operand::C, true) => self.unit(0, col, row),
            (Operand::C, false) => self.unit(row % self.gi, col, 0),
        }
    }

    /// The operand's tiles in piece order.
    pub fn tiles(&self, operand: Operand) -> impl Iterator<Item = Tile> + '_ {
        let (rows, cols) = match operand {
            Operand::A => (self.gi, self.gj),
            Operand::B => (self.gi, self.gk),
            Operand::C => (self.gk, self.gj),
        };
        (0..rows * cols).map(move |piece| {
            let (row, col) = (piece / cols, piece % cols);
            Tile {
                row,
                col,
                piece,
                owner: self.owner(operand, row, col),
            }
        })
    }

    /// The `k` tile unit `(i, j)` multiplies at step `s` of a 2-D
    /// algorithm: Cannon and PUMMA shift (skewed start), the others
    /// broadcast in order.
    pub fn k_at(&self, i: usize, j: usize, s: usize) -> usize {
        match self.algo {
            GemmAlgo::Cannon | GemmAlgo::Pumma => (i + j + s) % self.gk.max(1),
            _ => s % self.gk.max(1),
        }
    }

    /// The products of one launch: every `(i, j, k)` of a 3-D algorithm
    /// (`s` is ignored), or each unit's product at step `s` of a 2-D one.
    pub fn products(&self, s: usize) -> impl Iterator<Item = Product> + '_ {
        let layers = if self.three_d { self.gk } else { 1 };
        (0..self.gi * self.gj * layers).map(move |n| {
            let (ij, layer) = (n / layers, n % layers);
            let (i, j) = (ij / self.gj, ij % self.gj);
            let k = if self.three_d {
                layer
            } else {
                self.k_at(i, j, s)
            };
            Product {
                a: i * self.gj + j,
                b: i * self.gk + k,
                c: k * self.gj + j,
                unit: self.unit(i, j, layer),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(algo: GemmAlgo, three_d: bool) -> TileGrid {
        TileGrid {
            algo,
            gi: 2,
            gj: 3,
            gk: 2,
            three_d,
        }
    }

    #[test]
    fn cannon_shifts_and_summa_broadcasts() {
        let g = |algo| TileGrid {
            algo,
            gi: 2,
            gj: 2,
            gk: 2,
            three_d: false,
        };
        assert_eq!(g(GemmAlgo::Cannon).k_at(1, 0, 0), 1);
        assert_eq!(g(GemmAlgo::Cannon).k_at(1, 1, 1), 1);
        assert_eq!(g(GemmAlgo::Summa).k_at(1, 1, 1), 1);
    }

    #[test]
    fn every_unit_multiplies_every_k_once_over_the_steps() {
        for algo in [GemmAlgo::Cannon, GemmAlgo::Summa, GemmAlgo::Pumma] {
            let g = grid(algo, false);
            let mut seen = std::collections::BTreeSet::new();
            for s in 0..g.gk {
                let units: Vec<usize> = g.products(s).map(|p| p.unit).collect();
                assert_eq!(units, (0..g.gi * g.gj).collect::<Vec<_>>(), "{algo:?}");
                for p in g.products(s) {
                    assert!(seen.insert((p.a, p.b, p.c)), "{algo:?} {p:?}");
                }
            }
            assert_eq!(seen.len(), g.gi * g.gj * g.gk);
        }
    }

    #[test]
    fn a_3d_unit_is_one_product_and_owns_its_b_and_c_tiles() {
        let g = grid(GemmAlgo::Johnson, true);
        let products: Vec<Product> = g.products(0).collect();
        assert_eq!(products.len(), g.gi * g.gj * g.gk);
        // Unit (i=1, j=2, k=1) multiplies B(1, 1) by C(1, 2) into A(1, 2).
        let p = products[(g.gj + 2) * g.gk + 1];
        assert_eq!((p.a, p.b, p.c, p.unit), (5, 3, 5, 11));
        assert_eq!(g.owner(Operand::B, 1, 1), g.unit(1, 0, 1));
        assert_eq!(g.owner(Operand::C, 1, 2), g.unit(0, 2, 1));
        let b: Vec<usize> = g.tiles(Operand::B).map(|t| t.piece).collect();
        assert_eq!(b, (0..g.gi * g.gk).collect::<Vec<_>>());
        assert_eq!(g.tiles(Operand::C).count(), g.gk * g.gj);
    }

    #[test]
    fn a_2d_grid_homes_b_and_c_along_the_rows_and_columns() {
        let g = grid(GemmAlgo::Summa, false);
        let t = g.tiles(Operand::B).nth(3).expect("B(1, 1)");
        assert_eq!((t.row, t.col, t.owner), (1, 1, g.unit(1, 1, 0)));
        let t = g.tiles(Operand::C).nth(5).expect("C(1, 2)");
        assert_eq!((t.row, t.col, t.owner), (1, 2, g.unit(1, 2, 0)));
        assert_eq!(g.owner(Operand::A, 1, 2), 5);
    }
}
